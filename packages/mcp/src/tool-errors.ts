import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';

/** A CONTRACT.md error body: `{ error: { code, message, details? } }`. */
export interface ErrorBody {
  error: { code: string; message: string; details?: unknown };
}

/**
 * A failed tool call as the model sees it: `isError: true`, the first line
 * `<code>: <message>` (plus `Retry after N s.` for `rate_limited` and `unavailable`), then the
 * CONTRACT.md error body as JSON so `details` (the invalid fields, the TXT
 * record to publish) is there too.
 */
export function errorResult(body: ErrorBody, retryAfterSeconds?: number): CallToolResult {
  const retry = retryAfterSeconds === undefined ? '' : ` Retry after ${retryAfterSeconds} s.`;
  const fields = (body.error.details as { fields?: Array<{ path: string; message: string }> } | undefined)?.fields;
  const sentence = (text: string) => (/[.!?]$/.test(text) ? text : `${text}.`);
  const problems = Array.isArray(fields) ? fields.map((field) => ` ${field.path}: ${sentence(field.message)}`).join('') : '';
  const error = retryAfterSeconds === undefined ? body.error : { ...body.error, retry_after_seconds: retryAfterSeconds };
  return {
    isError: true,
    content: [
      { type: 'text', text: `${body.error.code}: ${body.error.message}${problems}${retry}` },
      { type: 'text', text: JSON.stringify({ error }) },
    ],
  };
}

/**
 * A successful tool call: the JSON result as `structuredContent` and, for
 * clients without it, as text (`text` when the caller already has it serialized).
 */
export function successResult(value: Record<string, unknown>, text = JSON.stringify(value)): CallToolResult {
  return { content: [{ type: 'text', text }], structuredContent: value };
}

/** The CONTRACT.md error body of a failed response, or one made from its status when the body is not one. */
export function errorBodyOf(status: number, text: string): ErrorBody {
  try {
    const parsed = JSON.parse(text) as Partial<ErrorBody>;
    if (typeof parsed.error?.code === 'string' && typeof parsed.error.message === 'string') return parsed as ErrorBody;
  } catch {
    // Not JSON: described from the status below.
  }
  return { error: { code: status >= 500 ? 'internal' : 'request_failed', message: `The call failed with HTTP ${status}.` } };
}
