import { createHmac, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InputError } from '../errors.js';
import type { HttpDelivery } from '../ports/http-delivery.js';

/** Options of {@link runHttpDeliveryContract}. */
export interface HttpDeliveryContractOptions {
  /** Adapter name for the describe block. */
  name: string;
  /** Builds the adapter; `allowPrivate: true` must let it reach plain-HTTP loopback receivers. */
  create(options: { allowPrivate: boolean }): HttpDelivery;
}

interface Captured {
  headers: IncomingMessage['headers'];
  body: string;
}

/** Standard Webhooks v1 signature of one message with one `whsec_` secret, computed independently of the adapter. */
function expectedSignature(secret: string, id: string, timestamp: string, body: string): string {
  const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
  return `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
}

/**
 * The contract every {@link HttpDelivery} adapter meets (CONTRACT.md "Signed
 * deliveries", Standard Webhooks v1): a JSON `{ type, timestamp, data }`
 * POST with `webhook-id`, `webhook-timestamp` (Unix seconds) and
 * `webhook-signature` (one `v1,<base64>` per secret, space-separated)
 * mirrored in `x-service-webhook-*`; non-2xx answers reported, not thrown;
 * redirects not followed; and, without `allowPrivate`, plain `http://` and
 * loopback, private and link-local targets refused with `InputError`.
 * Runs a loopback HTTP receiver; needs no other service.
 */
export function runHttpDeliveryContract(options: HttpDeliveryContractOptions): void {
  describe(`HttpDelivery contract: ${options.name}`, () => {
    const captured: Captured[] = [];
    let status = 200;
    let url = '';
    const server = createServer((request: IncomingMessage, response: ServerResponse) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        captured.push({ headers: request.headers, body: Buffer.concat(chunks).toString('utf8') });
        response.writeHead(status, status >= 300 && status < 400 ? { location: '/moved' } : {}).end();
      });
    });
    const secret = () => `whsec_${randomBytes(32).toString('base64')}`;

    beforeAll(async () => {
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
    });
    afterAll(
      () =>
        new Promise<void>((resolve) => {
          server.closeAllConnections();
          server.close(() => resolve());
        }),
    );

    it('POSTs { type, timestamp, data } signed with every secret, with the x-service-webhook-* mirrors', async () => {
      status = 200;
      const secrets = [secret(), secret()];
      const result = await options
        .create({ allowPrivate: true })
        .send({ url, secrets, messageId: 'msg_contract', type: 'job.run', data: { n: 1 } });
      expect(result).toMatchObject({ status: 200, ok: true });
      const last = captured.at(-1) as Captured;
      const body = JSON.parse(last.body) as Record<string, unknown>;
      expect(body).toEqual({
        type: 'job.run',
        timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
        data: { n: 1 },
      });
      const timestamp = last.headers['webhook-timestamp'] as string;
      expect(timestamp).toMatch(/^\d+$/);
      expect(last.headers['webhook-id']).toBe('msg_contract');
      expect(last.headers['webhook-signature']).toBe(
        secrets.map((one) => expectedSignature(one, 'msg_contract', timestamp, last.body)).join(' '),
      );
      expect(last.headers['x-service-webhook-signature']).toBe(last.headers['webhook-signature']);
      expect(last.headers['x-service-webhook-timestamp']).toBe(timestamp);
    });

    it('reports non-2xx answers as results and does not follow redirects', async () => {
      const delivery = options.create({ allowPrivate: true });
      status = 500;
      expect(await delivery.send({ url, secrets: [secret()], messageId: 'm1', type: 't', data: null })).toMatchObject({
        status: 500,
        ok: false,
      });
      status = 307;
      const before = captured.length;
      expect(await delivery.send({ url, secrets: [secret()], messageId: 'm2', type: 't', data: null })).toMatchObject({
        status: 307,
        ok: false,
      });
      expect(captured.length).toBe(before + 1);
    });

    it('without allowPrivate, refuses http:// and loopback, private and link-local targets with InputError', async () => {
      const delivery = options.create({ allowPrivate: false });
      for (const target of [url, 'https://127.0.0.1/hook', 'https://10.0.0.1/hook', 'https://169.254.169.254/', 'https://[::1]/']) {
        await expect(delivery.checkTarget(target)).rejects.toBeInstanceOf(InputError);
        await expect(delivery.send({ url: target, secrets: [secret()], messageId: 'm', type: 't', data: null })).rejects.toBeInstanceOf(
          InputError,
        );
      }
    });
  });
}
