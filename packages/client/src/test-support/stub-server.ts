import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A plain HTTP server on a free port of 127.0.0.1 whose answers the test scripts, with the times requests arrived. */
export interface StubServer {
  url: string;
  /** `performance.now()` of each request, in arrival order. */
  arrivals: number[];
  close(): Promise<void>;
}

/**
 * Starts a server that hands request number `n` (0-based) to `answer`
 * (which may leave it unanswered, to test timeouts).
 */
export async function startStubServer(
  answer: (n: number, request: IncomingMessage, response: ServerResponse) => void,
): Promise<StubServer> {
  const arrivals: number[] = [];
  const server = createServer((request, response) => {
    arrivals.push(performance.now());
    request.resume();
    answer(arrivals.length - 1, request, response);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    arrivals,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Writes a CONTRACT.md error body. */
export function sendError(response: ServerResponse, status: number, code: string, headers: Record<string, string> = {}): void {
  response.writeHead(status, { 'content-type': 'application/json', 'x-request-id': `req-${status}`, ...headers });
  response.end(JSON.stringify({ error: { code, message: `stub ${code}` } }));
}

/** Writes a JSON success body. */
export function sendJson(response: ServerResponse, body: unknown): void {
  response.writeHead(200, { 'content-type': 'application/json' });
  response.end(JSON.stringify(body));
}
