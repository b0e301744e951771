import { AgentInfraError } from './errors.js';
import { readTextUpTo } from './response-text.js';

function invalid(message: string, cause?: unknown): AgentInfraError {
  return new AgentInfraError({ status: 0, code: 'invalid_response', message, cause });
}

/**
 * The body of a 2xx response as the JSON object every route answers with.
 * @param maxBytes the largest body read (bytes); a longer one is cancelled unread.
 * @throws AgentInfraError status 0 `invalid_response` for a body longer than `maxBytes`, not JSON, or JSON but not an
 *   object (`null`, an array, a number…); what reading the body throws (a reset connection, an abort).
 */
export async function readJsonObject(response: Response, maxBytes: number): Promise<Record<string, unknown>> {
  const { text, truncated } = await readTextUpTo(response, maxBytes);
  if (truncated) throw invalid(`The response body is larger than maxResponseBytes (${maxBytes} bytes).`);
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch (error) {
    throw invalid('The response body is not JSON.', error);
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw invalid('The response body is not a JSON object.');
  return body as Record<string, unknown>;
}
