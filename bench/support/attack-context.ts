import { Agent, request } from 'node:http';
import { sendRawMail } from './raw-smtp.js';
import type { AttackContext } from './worst-inputs.js';

/** Longest wait for an HTTP answer. */
const REQUEST_TIMEOUT_MS = 60_000;

/** Where the attacks go and as whom. */
export interface AttackTarget {
  /** Server base URL, e.g. `http://127.0.0.1:4123`. */
  url: string;
  smtpPort: number;
  deviceKey: string;
  bridgeKey: string;
  agentId: string;
  /** The agent's mail address. */
  address: string;
}

/** Whether `body` is UTF-8 pieces (encoded-once.ts) rather than a value to send as JSON. */
const isPieces = (body: unknown): body is readonly Buffer[] =>
  Array.isArray(body) && body.length > 0 && body.every((piece) => Buffer.isBuffer(piece));

/**
 * An {@link AttackContext} for client `client`: one kept-alive HTTP/1.1
 * connection (node:http; replaced after a failed request), a new SMTP
 * session per mail. `close` drops the connection.
 */
export function createAttackContext(target: AttackTarget, client: number): AttackContext & { close(): void } {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const base = new URL(target.url);
  const post = (path: string, body: readonly Buffer[] | string | object, authorization: string) => {
    const pieces = isPieces(body) ? body : [Buffer.from(typeof body === 'string' ? body : JSON.stringify(body))];
    const length = pieces.reduce((sum, piece) => sum + piece.length, 0);
    return new Promise<number>((resolve, reject) => {
      const outgoing = request(
        {
          agent,
          host: base.hostname,
          port: base.port,
          path: `/functions/v1${path}`,
          method: 'POST',
          headers: { 'content-type': 'application/json', 'content-length': length, authorization },
        },
        (incoming) => {
          incoming.resume();
          incoming.on('end', () => resolve(incoming.statusCode ?? 0));
          incoming.on('error', reject);
        },
      );
      outgoing.setTimeout(REQUEST_TIMEOUT_MS, () => outgoing.destroy(new Error(`no answer within ${REQUEST_TIMEOUT_MS} ms`)));
      outgoing.on('error', reject);
      for (const piece of pieces) outgoing.write(piece);
      outgoing.end();
    });
  };
  return {
    post: (path, body, credential) =>
      post(path, body, `Bearer ${credential === 'device' ? target.deviceKey : target.bridgeKey}`).catch((error: Error) => {
        agent.destroy();
        throw error;
      }),
    smtp: async (envelope, message) => (await sendRawMail(target.smtpPort, envelope, message)).data,
    agentId: target.agentId,
    address: target.address,
    client,
    close: () => agent.destroy(),
  };
}
