import { SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/sdk/types.js';
import { BATCH_REVISIONS } from './batch-guards.js';

/**
 * Whether a JSON-RPC error that names no request (the body could not be read,
 * or was refused whole) leaves its `id` member out for the client that sent
 * `headerVersion`. Yes for a client of MCP 2025-06-18 or later (its
 * `MCP-Protocol-Version` header, sent on every request after initialization):
 * MCP's schema has no `"id": null`, and the SDK's message schema (as strict
 * clients do) refuses an error carrying it. No, so `"id": null` as JSON-RPC 2.0 §5
 * requires, for 2025-03-26 and older, without the header (the spec reads that
 * as 2025-03-26, and an `initialize` request has none) and for a revision the
 * SDK does not support.
 * @param headerVersion the request's `MCP-Protocol-Version` header, `null` when absent.
 */
export function omitsUnnamedId(headerVersion: string | null): boolean {
  return headerVersion !== null && SUPPORTED_PROTOCOL_VERSIONS.includes(headerVersion) && !BATCH_REVISIONS.has(headerVersion);
}

/**
 * `response` without the `"id": null` of its JSON-RPC error body, for a
 * client {@link omitsUnnamedId} answers so: the SDK's transport writes
 * `"id": null` into its own refusals (406 without the right `Accept`, 415
 * without a JSON `Content-Type`, 400 for a body that is no JSON-RPC message)
 * whatever the revision. A successful answer, a body that is not JSON, or an
 * error that names a request is returned with its status, headers and text
 * unchanged.
 * @param response the transport's answer to one POST.
 */
export async function withoutNullId(response: Response): Promise<Response> {
  if (response.ok || !response.headers.get('content-type')?.startsWith('application/json')) return response;
  const text = await response.text();
  const headers = new Headers(response.headers);
  headers.delete('content-length');
  return new Response(withoutNullIdText(text), { status: response.status, headers });
}

/** `text` (a JSON-RPC error) re-serialized without its `"id": null`; any other text as it is. */
function withoutNullIdText(text: string): string {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return text;
  }
  if (typeof body !== 'object' || body === null || !('error' in body) || !('id' in body) || body.id !== null) return text;
  const { id: _nullId, ...error } = body;
  return JSON.stringify(error);
}
