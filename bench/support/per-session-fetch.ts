import { Agent, request } from 'node:http';

/**
 * A `fetch` for one MCP client that keeps its own keep-alive TCP connection
 * (Node's global fetch pools connections across every client of a process,
 * so many clients would share a few sockets). Enough for the JSON responses
 * of a stateless MCP server: it buffers each response body.
 * @returns the fetch function and `close()`, which drops the connection.
 */
export function perSessionFetch(): { fetch: typeof fetch; close: () => void } {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const send = (input: string | URL | Request, init: RequestInit = {}): Promise<Response> =>
    new Promise((resolve, reject) => {
      const url = new URL(input instanceof Request ? input.url : input);
      const headers = Object.fromEntries(new Headers(init.headers).entries());
      const body = typeof init.body === 'string' ? init.body : undefined;
      if (body !== undefined) headers['content-length'] = String(Buffer.byteLength(body));
      const outgoing = request(url, { method: init.method ?? 'GET', headers, agent }, (incoming) => {
        const chunks: Buffer[] = [];
        incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
        incoming.on('end', () => {
          const status = incoming.statusCode ?? 500;
          const responseHeaders = new Headers();
          for (const [name, value] of Object.entries(incoming.headers)) if (typeof value === 'string') responseHeaders.set(name, value);
          const payload = status === 204 || status === 202 ? null : Buffer.concat(chunks);
          resolve(new Response(payload, { status, headers: responseHeaders }));
        });
        incoming.on('error', reject);
      });
      outgoing.on('error', reject);
      outgoing.end(body);
    });
  return { fetch: send as typeof fetch, close: () => agent.destroy() };
}
