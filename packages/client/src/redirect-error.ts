import { AgentInfraError } from './errors.js';

/**
 * The error for a redirect answer (any 3xx, or a browser's `opaqueredirect`
 * with status 0), which the client never follows: following it would re-send
 * the body and credential to wherever `Location` points. `details.location`
 * holds the target when readable (not in browsers).
 * @returns status the 3xx (0 in browsers), code `invalid_response`; `undefined` when `response` is no redirect.
 */
export function redirectError(response: Response): AgentInfraError | undefined {
  if (response.type !== 'opaqueredirect' && (response.status < 300 || response.status > 399)) return undefined;
  const location = response.headers.get('location') ?? undefined;
  return new AgentInfraError({
    status: response.status,
    code: 'invalid_response',
    message: `The server answered with a redirect${location ? ` to ${location.slice(0, 200)}` : ''}, which the client does not follow: set url to the final address.`,
    details: location === undefined ? undefined : { location },
    requestId: response.headers.get('x-request-id') ?? undefined,
  });
}
