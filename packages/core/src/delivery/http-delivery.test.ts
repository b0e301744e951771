import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { type AddressInfo, createServer as createNetServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InputError } from '../errors.js';
import { runHttpDeliveryContract } from '../testing/http-delivery-contract.js';
import { createHttpDelivery } from './http-delivery.js';
import type { HostResolver } from './target-guard.js';
import { newWebhookSecret } from './webhook-signature.js';

interface Received {
  headers: IncomingMessage['headers'];
  body: string;
  path: string;
}

/** A loopback HTTP(S) receiver whose answer each test sets. */
function receiver(server: Server) {
  const received: Received[] = [];
  let answer: (response: ServerResponse) => void = (response) => response.writeHead(204).end();
  server.on('request', (request: IncomingMessage, response: ServerResponse) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      received.push({ headers: request.headers, body: Buffer.concat(chunks).toString('utf8'), path: request.url ?? '' });
      answer(response);
    });
  });
  return {
    received,
    answerWith(next: (response: ServerResponse) => void) {
      answer = next;
    },
    async listen(): Promise<number> {
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      return (server.address() as AddressInfo).port;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const fixedResolver =
  (table: Record<string, string[]>): HostResolver =>
  async (hostname) => {
    const addresses = table[hostname];
    if (!addresses) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    return addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };

runHttpDeliveryContract({ name: 'createHttpDelivery', create: (options) => createHttpDelivery(options) });

describe('createHttpDelivery to a loopback receiver (allowPrivate)', () => {
  const target = receiver(createHttpServer());
  let url: string;
  const delivery = createHttpDelivery({ allowPrivate: true });

  beforeAll(async () => {
    url = `http://127.0.0.1:${await target.listen()}/hooks/run?x=1`;
  });
  afterAll(() => target.close());

  it('POSTs { type, timestamp, data } with Standard Webhooks headers the verifier accepts', async () => {
    target.answerWith((response) => response.writeHead(200, { 'content-type': 'text/plain' }).end('ok'));
    const secret = newWebhookSecret();
    const result = await delivery.send({
      url,
      secrets: [secret],
      messageId: 'run_abc',
      type: 'job.run',
      data: { run_id: 'run_abc', attempt: 1 },
    });
    expect(result).toMatchObject({ status: 200, ok: true });
    expect(result.ms).toBeGreaterThanOrEqual(0);
    const last = target.received.at(-1) as Received;
    expect(last.path).toBe('/hooks/run?x=1');
    expect(last.headers['content-type']).toBe('application/json');
    expect(last.headers['webhook-id']).toBe('run_abc');
    expect(last.headers['x-service-webhook-timestamp']).toBe(last.headers['webhook-timestamp']);
    expect(last.headers['x-service-webhook-signature']).toBe(last.headers['webhook-signature']);
    const payload = new Webhook(secret).verify(last.body, last.headers as Record<string, string>) as Record<string, unknown>;
    expect(payload).toEqual({
      type: 'job.run',
      timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      data: { run_id: 'run_abc', attempt: 1 },
    });
    expect(Math.abs(Number(last.headers['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(5);
  });

  it('reports non-2xx answers without throwing, and never follows a redirect', async () => {
    const before = target.received.length;
    target.answerWith((response) => response.writeHead(302, { location: '/elsewhere' }).end());
    expect(await delivery.send({ url, secrets: [newWebhookSecret()], messageId: 'm1', type: 't', data: null })).toMatchObject({
      status: 302,
      ok: false,
    });
    expect(target.received.length).toBe(before + 1);
    target.answerWith((response) => response.writeHead(503).end('busy'));
    expect(await delivery.send({ url, secrets: [newWebhookSecret()], messageId: 'm2', type: 't', data: null })).toMatchObject({
      status: 503,
      ok: false,
    });
  });

  it('reads at most 64 KiB of a large answer and still reports its status', async () => {
    target.answerWith((response) => response.writeHead(200).end(Buffer.alloc(1_000_000, 97)));
    expect(await delivery.send({ url, secrets: [newWebhookSecret()], messageId: 'm3', type: 't', data: null })).toMatchObject({
      status: 200,
      ok: true,
    });
  });

  it('aborts after the timeout with a message naming only the origin', async () => {
    target.answerWith(() => undefined);
    const sent = delivery.send({ url, secrets: [newWebhookSecret()], messageId: 'm4', type: 't', data: null, timeoutMs: 150 });
    await expect(sent).rejects.toThrow(/^Delivery to http:\/\/127\.0\.0\.1:\d+ timed out after 150 ms\.$/);
  });

  it('stops when the caller aborts', async () => {
    target.answerWith(() => undefined);
    const controller = new AbortController();
    const sent = delivery.send({ url, secrets: [newWebhookSecret()], messageId: 'm5', type: 't', data: null, signal: controller.signal });
    setTimeout(() => controller.abort(), 50);
    await expect(sent).rejects.toThrow(/was aborted/);
  });

  // Review: a 101 emits no 'response' and Node drops the socket silently: send() never settled, past its timeout.
  it('reports a 101 Switching Protocols answer as a failed attempt instead of hanging', async () => {
    const switching = createNetServer((socket) => {
      socket.once('data', () => socket.write('HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n'));
    });
    await new Promise<void>((resolve) => switching.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = switching.address() as AddressInfo;
      const sent = delivery.send({
        url: `http://127.0.0.1:${port}/`,
        secrets: [newWebhookSecret()],
        messageId: 'm7',
        type: 't',
        data: null,
      });
      expect(await sent).toMatchObject({ status: 101, ok: false });
    } finally {
      await new Promise((resolve) => switching.close(resolve));
    }
  });

  it('reports a 200 whose body is cut off as the 200 it is', async () => {
    const cut = createNetServer((socket) => {
      socket.once('data', () => socket.end('HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\npartial'));
    });
    await new Promise<void>((resolve) => cut.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = cut.address() as AddressInfo;
      const sent = delivery.send({
        url: `http://127.0.0.1:${port}/`,
        secrets: [newWebhookSecret()],
        messageId: 'm8',
        type: 't',
        data: null,
      });
      expect(await sent).toMatchObject({ status: 200, ok: true });
    } finally {
      await new Promise((resolve) => cut.close(resolve));
    }
  });

  it('settles at a 2xx status whose body never ends, and hangs up on that body within a second', async () => {
    let hungUp = false;
    target.answerWith((response) => {
      response.writeHead(200, { 'content-type': 'text/plain' });
      response.write('still thinking');
      response.once('close', () => {
        hungUp = true;
      });
    });
    const started = Date.now();
    const sent = delivery.send({ url, secrets: [newWebhookSecret()], messageId: 'm9', type: 't', data: null, timeoutMs: 10_000 });
    expect(await sent).toMatchObject({ status: 200, ok: true });
    expect(Date.now() - started).toBeLessThan(2_000);
    await expect.poll(() => hungUp, { timeout: 3_000 }).toBe(true);
    expect(Date.now() - started).toBeLessThan(3_000);
  });

  it('settles at a 2xx status whose connection is then reset mid-body, without an unhandled error', async () => {
    target.answerWith((response) => {
      response.writeHead(200, { 'content-type': 'text/plain' });
      response.write('partial');
      setTimeout(() => response.socket?.destroy(), 50);
    });
    const sent = await delivery.send({ url, secrets: [newWebhookSecret()], messageId: 'm10', type: 't', data: null, timeoutMs: 10_000 });
    expect(sent).toMatchObject({ status: 200, ok: true });
    await new Promise((resolve) => setTimeout(resolve, 200));
  });

  it('turns network errors into an Error naming the origin and code', async () => {
    const closed = receiver(createHttpServer());
    const port = await closed.listen();
    await closed.close();
    const sent = delivery.send({ url: `http://127.0.0.1:${port}/`, secrets: [newWebhookSecret()], messageId: 'm6', type: 't', data: null });
    await expect(sent).rejects.toThrow(`Delivery to http://127.0.0.1:${port} failed: ECONNREFUSED.`);
  });

  it('connects to the address its resolver returned, with the URL name as Host', async () => {
    target.answerWith((response) => response.writeHead(204).end());
    const pinned = createHttpDelivery({ allowPrivate: true, resolver: fixedResolver({ 'hooks.example.test': ['127.0.0.1'] }) });
    const port = new URL(url).port;
    const result = await pinned.send({
      url: `http://hooks.example.test:${port}/x`,
      secrets: [newWebhookSecret()],
      messageId: 'm7',
      type: 't',
      data: 1,
    });
    expect(result.status).toBe(204);
    expect(target.received.at(-1)?.headers.host).toBe(`hooks.example.test:${port}`);
  });
});

describe('createHttpDelivery SSRF guard (allowPrivate: false)', () => {
  const resolver = fixedResolver({
    'public.example.test': ['93.184.216.34', '2606:2800:220:1:248:1893:25c8:1946'],
    'rebind.example.test': ['127.0.0.1'],
    'metadata.example.test': ['169.254.169.254'],
    'mixed.example.test': ['93.184.216.34', '10.0.0.7'],
    'v6-mapped.example.test': ['::ffff:192.168.0.10'],
    'ula.example.test': ['fd00::1'],
  });
  const delivery = createHttpDelivery({ allowPrivate: false, resolver });

  it.each([
    ['http://public.example.test/hook', /scheme must be https, not http/],
    ['ftp://public.example.test/hook', /scheme must be https, not ftp\./],
    ['not a url', /not a valid absolute URL/],
    ['https://user:pw@public.example.test/', /must not carry credentials/],
    ['https://127.0.0.1/hook', /127\.0\.0\.1 is refused: it is a loopback address/],
    ['https://2130706433/hook', /127\.0\.0\.1 is refused: it is a loopback address/],
    ['https://0x7f.1/hook', /127\.0\.0\.1 is refused/],
    ['https://[::1]/hook', /::1 is refused: it is a loopback address/],
    ['https://[::ffff:127.0.0.1]/hook', /is refused: it is a loopback address/],
    ['https://10.1.2.3/hook', /private address/],
    ['https://100.64.1.1/hook', /carrier-grade-nat address/],
    ['https://169.254.169.254/latest/meta-data', /link-local address/],
    ['https://[fe80::1]/hook', /link-local address/],
    ['https://0.0.0.0/hook', /is an unspecified address/],
    ['https://rebind.example.test/hook', /rebind\.example\.test is refused: it resolves to a loopback address/],
    ['https://metadata.example.test/hook', /resolves to a link-local address/],
    ['https://mixed.example.test/hook', /resolves to a private address/],
    ['https://v6-mapped.example.test/hook', /resolves to a private address/],
    ['https://ula.example.test/hook', /resolves to a unique-local address/],
    ['https://nowhere.example.test/hook', /nowhere\.example\.test does not resolve \(ENOTFOUND\)/],
  ])('checkTarget(%s) → 400 (%s)', async (url, reason) => {
    const checked = delivery.checkTarget(url);
    await expect(checked).rejects.toBeInstanceOf(InputError);
    await expect(checked).rejects.toThrow(reason);
  });

  it('accepts a public https target', async () => {
    await expect(delivery.checkTarget('https://public.example.test/hook')).resolves.toBeUndefined();
    await expect(delivery.checkTarget('https://93.184.216.34:8443/x')).resolves.toBeUndefined();
  });

  it('refuses at send time too, without connecting (DNS answer changed after the check)', async () => {
    const answers = ['93.184.216.34', '127.0.0.1'];
    const flipping = createHttpDelivery({
      allowPrivate: false,
      resolver: async () => [{ address: answers.shift() ?? '127.0.0.1', family: 4 }],
    });
    await flipping.checkTarget('https://flip.example.test/hook');
    const sent = flipping.send({
      url: 'https://flip.example.test/hook',
      secrets: [newWebhookSecret()],
      messageId: 'm',
      type: 't',
      data: null,
    });
    await expect(sent).rejects.toThrow(/flip\.example\.test is refused: it resolves to a loopback address/);
    await expect(
      delivery.send({ url: 'https://127.0.0.1:1/', secrets: [newWebhookSecret()], messageId: 'm', type: 't', data: null }),
    ).rejects.toBeInstanceOf(InputError);
  });
});

const hasOpenssl = (() => {
  try {
    execFileSync('openssl', ['version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

describe.runIf(hasOpenssl)('createHttpDelivery over HTTPS with a pinned address', () => {
  const folder = mkdtempSync(join(tmpdir(), 'agentinfra-tls-'));
  let target: ReturnType<typeof receiver>;
  let certificate: string;
  let port: number;

  beforeAll(async () => {
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-days',
        '1',
        '-subj',
        '/CN=hooks.example.test',
        '-addext',
        'subjectAltName=DNS:hooks.example.test',
        '-keyout',
        join(folder, 'key.pem'),
        '-out',
        join(folder, 'cert.pem'),
      ],
      { stdio: 'ignore' },
    );
    certificate = readFileSync(join(folder, 'cert.pem'), 'utf8');
    target = receiver(createHttpsServer({ key: readFileSync(join(folder, 'key.pem')), cert: certificate }));
    port = await target.listen();
  });
  afterAll(async () => {
    await target?.close();
    rmSync(folder, { recursive: true, force: true });
  });

  it('verifies the certificate for the URL name (SNI) while connecting to the resolved loopback address', async () => {
    const delivery = createHttpDelivery({
      allowPrivate: true,
      resolver: fixedResolver({ 'hooks.example.test': ['127.0.0.1'] }),
      extraCaCertificates: [certificate],
    });
    const secret = newWebhookSecret();
    const result = await delivery.send({
      url: `https://hooks.example.test:${port}/tls`,
      secrets: [secret],
      messageId: 'tls_1',
      type: 'job.run',
      data: { ok: 1 },
    });
    expect(result).toMatchObject({ status: 204, ok: true });
    const last = target.received.at(-1) as Received;
    expect(last.headers.host).toBe(`hooks.example.test:${port}`);
    expect(() => new Webhook(secret).verify(last.body, last.headers as Record<string, string>)).not.toThrow();
  });

  it('fails when the certificate does not match or is not trusted', async () => {
    const untrusted = createHttpDelivery({ allowPrivate: true, resolver: fixedResolver({ 'hooks.example.test': ['127.0.0.1'] }) });
    await expect(
      untrusted.send({
        url: `https://hooks.example.test:${port}/tls`,
        secrets: [newWebhookSecret()],
        messageId: 'tls_2',
        type: 't',
        data: null,
      }),
    ).rejects.toThrow(/failed: (SELF_SIGNED_CERT_IN_CHAIN|DEPTH_ZERO_SELF_SIGNED_CERT)/);
    const wrongName = createHttpDelivery({
      allowPrivate: true,
      resolver: fixedResolver({ 'other.example.test': ['127.0.0.1'] }),
      extraCaCertificates: [certificate],
    });
    await expect(
      wrongName.send({
        url: `https://other.example.test:${port}/tls`,
        secrets: [newWebhookSecret()],
        messageId: 'tls_3',
        type: 't',
        data: null,
      }),
    ).rejects.toThrow(/ERR_TLS_CERT_ALTNAME_INVALID/);
  });
});
