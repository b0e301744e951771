import { Agent, request } from 'node:http';

/** Longest wait for an answer before the request fails. */
const REQUEST_TIMEOUT_MS = 60_000;

/** A JSON answer and how long it took. */
export interface TimedAnswer<T> {
  body: T;
  /** Milliseconds from sending the request to the end of the answer's body. */
  ms: number;
}

/**
 * A client that POSTs JSON over one kept-alive HTTP/1.1 connection, one
 * request at a time, for latency measurements with little client overhead
 * (node:http, no fetch/undici layers).
 */
export interface JsonClient {
  /**
   * POSTs `body` to `path` (relative to the base URL) with `headers`.
   * @throws Error with the status and body text when the answer is not 2xx.
   */
  post<T>(path: string, body: unknown, headers?: Record<string, string>): Promise<TimedAnswer<T>>;
  close(): void;
}

/** A {@link JsonClient} for `baseUrl`, e.g. `http://127.0.0.1:4123`. */
export function createJsonClient(baseUrl: string): JsonClient {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const base = new URL(baseUrl);
  return {
    post<T>(path: string, body: unknown, headers: Record<string, string> = {}) {
      const payload = Buffer.from(JSON.stringify(body));
      return new Promise<TimedAnswer<T>>((resolve, reject) => {
        const startedAt = performance.now();
        const outgoing = request(
          {
            agent,
            host: base.hostname,
            port: base.port,
            path: `${base.pathname.replace(/\/$/, '')}${path}`,
            method: 'POST',
            headers: { 'content-type': 'application/json', 'content-length': payload.length, ...headers },
          },
          (incoming) => {
            const chunks: Buffer[] = [];
            incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
            incoming.on('end', () => {
              const ms = performance.now() - startedAt;
              const text = Buffer.concat(chunks).toString('utf8');
              const status = incoming.statusCode ?? 0;
              if (status < 200 || status >= 300) reject(new Error(`POST ${path}: HTTP ${status} ${text.slice(0, 300)}`));
              else resolve({ body: JSON.parse(text) as T, ms });
            });
            incoming.on('error', reject);
          },
        );
        outgoing.setTimeout(REQUEST_TIMEOUT_MS, () =>
          outgoing.destroy(new Error(`POST ${path}: no answer within ${REQUEST_TIMEOUT_MS} ms`)),
        );
        outgoing.on('error', reject);
        outgoing.end(payload);
      });
    },
    close: () => agent.destroy(),
  };
}
