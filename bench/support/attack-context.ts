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

/**
 * An {@link AttackContext} for client `client`: one kept-alive HTTP/1.1
 * connection (node:http; replaced after a failed request), a new SMTP
 * session per mail. `close` drops the connection.
 */
export function createAttackContext(target: AttackTarget, client: number): AttackContext & { close(): void } {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const base = new URL(target.url);
  const post = (path: string, body: unknown, authorization: string) => {
    const payload = Buffer.from(typeof body === 'string' ? body : JSON.stringify(body));
    return new Promise<number>((resolve, reject) => {
      const outgoing = request(
        {
          agent,
          host: base.hostname,
          port: base.port,
          path: `/functions/v1${path}`,
          method: 'POST',
          headers: { 'content-type': 'application/json', 'content-length': payload.length, authorization },
        },
        (incoming) => {
          incoming.resume();
          incoming.on('end', () => resolve(incoming.statusCode ?? 0));
          incoming.on('error', reject);
        },
      );
      outgoing.setTimeout(REQUEST_TIMEOUT_MS, () => outgoing.destroy(new Error(`no answer within ${REQUEST_TIMEOUT_MS} ms`)));
      outgoing.on('error', reject);
      outgoing.end(payload);
    });
  };
  return {
    post: (path, body, credential) =>
      post(path, body, `Bearer ${credential === 'device' ? target.deviceKey : target.bridgeKey}`).catch((error: Error) => {
        agent.destroy();
        throw error;
      }),
    smtp: async (envelope, mime) => (await sendRawMail(target.smtpPort, envelope, mime)).data,
    agentId: target.agentId,
    address: target.address,
    client,
    close: () => agent.destroy(),
  };
}
