import { AgentInfraError } from './errors.js';

/**
 * The headers of a route call: `extra` (the per-call `headers`, names in any
 * case), then `content-type: application/json` and `authorization: Bearer <key>`
 * where `extra` does not set them, so a per-call `authorization` (e.g. a
 * delegation token) wins over the client's key.
 * @throws AgentInfraError status 0 `invalid_request` when a name or value in `extra` is not a valid header; neither the
 *   message nor a `cause` repeats it.
 */
export function requestHeaders(key: string | undefined, extra: Record<string, string> | undefined): Headers {
  let headers: Headers;
  try {
    headers = new Headers(extra);
  } catch {
    throw new AgentInfraError({
      status: 0,
      code: 'invalid_request',
      message: 'A name or value in headers is not a valid HTTP header (e.g. it holds a line break or control character).',
    });
  }
  if (!headers.has('content-type')) headers.set('content-type', 'application/json');
  if (key !== undefined && !headers.has('authorization')) headers.set('authorization', `Bearer ${key}`);
  return headers;
}
