import { createServer, type Server } from 'node:http';
import type { PortMap } from '@agentinfra/core';

type Logger = PortMap['logger'];

/** The HTTP-01 challenge path prefix (RFC 8555 §8.3). */
const PREFIX = '/.well-known/acme-challenge/';
/** Tokens are base64url (RFC 8555 §8.1: at least 128 bits of entropy). */
const TOKEN = /^[A-Za-z0-9_-]{16,256}$/;

/** A running HTTP-01 listener. */
export interface Http01Listener {
  /** The port it listens on. */
  port: number;
  close(): Promise<void>;
}

/**
 * Serves `GET|HEAD /.well-known/acme-challenge/<token>` with the key
 * authorization from `lookup` as `text/plain` (RFC 8555 §8.3); everything
 * else is 404. Tokens live in the database, so any replica's listener
 * answers for an order another replica runs.
 * @throws the listen error (its `code` EACCES, EADDRINUSE, …) when the port cannot be bound.
 */
export async function startHttp01Listener(options: {
  port: number;
  host?: string;
  lookup: (token: string) => Promise<string | null>;
  logger: Logger;
}): Promise<Http01Listener> {
  const server: Server = createServer((request, response) => {
    const path = (request.url ?? '').split('?')[0] ?? '';
    const token = path.startsWith(PREFIX) ? path.slice(PREFIX.length) : '';
    const answer = (status: number, body: string) => {
      response.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', 'content-length': Buffer.byteLength(body) });
      response.end(request.method === 'HEAD' ? undefined : body);
    };
    if ((request.method !== 'GET' && request.method !== 'HEAD') || !TOKEN.test(token)) return answer(404, 'not found\n');
    options.lookup(token).then(
      (keyAuthorization) => (keyAuthorization === null ? answer(404, 'not found\n') : answer(200, keyAuthorization)),
      (error: unknown) => {
        options.logger.error({ err: error }, 'HTTP-01 token lookup failed');
        answer(500, 'internal error\n');
      },
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => resolve());
  });
  const address = server.address();
  return {
    port: typeof address === 'object' && address ? address.port : options.port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
