import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One callback as the receiver got it. */
export interface ReceivedCallback {
  path: string;
  headers: Record<string, string>;
  body: string;
  /** The parsed JSON body. */
  // biome-ignore lint/suspicious/noExplicitAny: tests read callback bodies loosely
  json: any;
  receivedAt: number;
}

/** How the receiver answers a path: a status, or a function that answers (possibly later). */
export type CallbackAnswer = number | ((response: ServerResponse, callback: ReceivedCallback) => void);

/** A plain-HTTP callback receiver on 127.0.0.1 (the tests' delivery allows loopback). */
export interface CallbackReceiver {
  /** `http://127.0.0.1:<port>`. */
  url: string;
  received: ReceivedCallback[];
  /** Callbacks received on `path`. */
  on(path: string): ReceivedCallback[];
  /** Sets the answer for `path` (default 200). */
  answer(path: string, answer: CallbackAnswer): void;
  /** Resolves once `predicate` holds (checked on every callback and every 25 ms). @throws Error after `timeoutMs`. */
  waitFor(predicate: () => boolean | Promise<boolean>, timeoutMs?: number, what?: string): Promise<void>;
  close(): Promise<void>;
}

/** Starts a {@link CallbackReceiver} on a free port. */
export async function startCallbackReceiver(): Promise<CallbackReceiver> {
  const received: ReceivedCallback[] = [];
  const answers = new Map<string, CallbackAnswer>();
  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      let json: unknown = null;
      try {
        json = JSON.parse(body);
      } catch {
        json = null;
      }
      const path = (request.url ?? '/').split('?')[0] as string;
      const callback: ReceivedCallback = { path, headers: request.headers as Record<string, string>, body, json, receivedAt: Date.now() };
      received.push(callback);
      const answer = answers.get(path) ?? 200;
      if (typeof answer === 'number') response.writeHead(answer, { 'content-type': 'text/plain' }).end(String(answer));
      else answer(response, callback);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    received,
    on: (path) => received.filter((callback) => callback.path === path),
    answer: (path, answer) => void answers.set(path, answer),
    async waitFor(predicate, timeoutMs = 10_000, what = 'condition') {
      const deadline = Date.now() + timeoutMs;
      while (!(await predicate())) {
        if (Date.now() > deadline) throw new Error(`Timed out after ${timeoutMs} ms waiting for ${what}.`);
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
