/**
 * The answer to a JSON-RPC batch, as an array: JSON-RPC 2.0 answers a batch
 * with an array of responses however many there are, but the SDK's JSON
 * response holds a bare object when the batch had one request (`[ping]`, or a
 * request and notifications). Batches exist only in MCP 2025-03-26, which the
 * SDK still accepts; later revisions send one message per POST. Any other
 * answer (202 to notifications only, an error refusing the whole POST, which
 * JSON-RPC answers with one object) is returned as it is.
 * @param response the transport's answer to a POST whose body was an array.
 */
export async function asBatchAnswer(response: Response): Promise<Response> {
  if (response.status !== 200 || !response.headers.get('content-type')?.startsWith('application/json')) return response;
  const text = await response.text();
  const headers = new Headers(response.headers);
  headers.delete('content-length');
  return new Response(text.startsWith('{') ? `[${text}]` : text, { status: 200, headers });
}
