import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll } from 'vitest';

/** One webhook delivery as the receiver got it. */
export interface ReceivedDelivery {
  path: string;
  headers: Record<string, string>;
  /** The exact body bytes as text (what the signature covers). */
  body: string;
  // biome-ignore lint/suspicious/noExplicitAny: tests read delivery bodies field by field
  json: any;
}

/** A plain-HTTP receiver on 127.0.0.1 (the tests' delivery adapter allows loopback). */
export interface WebhookReceiver {
  /** `http://127.0.0.1:<port>`. */
  url: string;
  received: ReceivedDelivery[];
  /** Deliveries received on `path`. */
  on(path: string): ReceivedDelivery[];
  /** The status `path` answers with (default 204); `'never'` records the request and leaves it unanswered. */
  answer(path: string, status: number | 'never'): void;
  close(): Promise<void>;
}

/**
 * Starts a {@link WebhookReceiver} on `options.port` of 127.0.0.1 (default: a
 * free port; a given one lets a receiver that was down come back at the URL
 * registered meanwhile).
 * @throws Error (EADDRINUSE) when the given port is taken.
 */
export async function startWebhookReceiver(options: { port?: number } = {}): Promise<WebhookReceiver> {
  const received: ReceivedDelivery[] = [];
  const answers = new Map<string, number | 'never'>();
  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const path = (request.url ?? '/').split('?')[0] as string;
      let json: unknown = null;
      try {
        json = JSON.parse(body);
      } catch {
        json = null;
      }
      const status = answers.get(path) ?? 204;
      received.push({ path, headers: request.headers as Record<string, string>, body, json });
      if (status !== 'never') response.writeHead(status).end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    received,
    on: (path) => received.filter((delivery) => delivery.path === path),
    answer: (path, status) => void answers.set(path, status),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Resolves once `predicate` holds (checked every 20 ms). @throws Error naming `what` after `timeoutMs`. */
export async function waitFor(predicate: () => boolean | Promise<boolean>, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await predicate())) {
    if (Date.now() > deadline) throw new Error(`Timed out after ${timeoutMs} ms waiting for ${what}.`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/**
 * Starts a {@link WebhookReceiver} on a free port before the tests of the
 * enclosing `describe` and closes it after them (call it in the describe's
 * body; called before `usePostboxServer`, it is closed after the server stopped).
 * @returns the receiver, whose fields are set once that describe's `beforeAll` has run.
 */
export function useWebhookReceiver(): WebhookReceiver {
  const receiver = {} as WebhookReceiver;
  beforeAll(async () => {
    Object.assign(receiver, await startWebhookReceiver());
  });
  afterAll(async () => {
    await receiver.close?.();
  });
  return receiver;
}
