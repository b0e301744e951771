import { Agent, createServer, request, type Server } from 'node:http';
import { type AddressInfo, connect, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createApiServer } from './api-server.js';
import { answerClientErrors } from './client-errors.js';
import { MAX_JSON_ARRAY_ELEMENTS } from './json-text.js';
import { defineModule } from './module.js';
import { limitPipelinedRequests } from './pipelined-requests.js';
import { closeQuietConnections } from './quiet-connections.js';
import { routesFor } from './route.js';
import { unstartedKernel } from './unstarted-kernel.test-support.js';

const route = routesFor<null>();
/** A route without credentials that takes a list of numbers. */
const numbersModule = defineModule({
  name: 'agent-numbers',
  ports: [],
  migrations: {},
  permissions: [],
  service: () => null,
  routes: [
    route({
      path: '/sum',
      summary: 'Adds numbers.',
      request: z.strictObject({ values: z.array(z.number()) }),
      response: z.object({ sum: z.number() }),
      auth: { kind: 'none' },
      handler: async ({ body }) => ({ sum: body.values.reduce((total, value) => total + value, 0) }),
    }),
  ],
});

/** A text no answer may echo: it stands for the request's own bytes. */
const MARKER = 'zq_marker_7f3a';

/** What came back on a raw connection before the server closed it: status, headers (lower-case names) and body. */
interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
  closed: boolean;
}

/**
 * Opens a connection to `port` (from `localAddress`, a loopback address, when given), collecting what comes
 * back; `answer` resolves when the server closes it (or after 5 s).
 */
function openConnection(port: number, localAddress?: string) {
  const socket: Socket = connect({ port, host: '127.0.0.1', ...(localAddress ? { localAddress } : {}) });
  socket.on('error', () => undefined);
  let received = Buffer.alloc(0);
  socket.on('data', (chunk: Buffer) => {
    received = Buffer.concat([received, chunk]);
  });
  const answer = new Promise<RawAnswer>((resolve) => {
    const timer = setTimeout(() => resolve(parseAnswer(received, false)), 5_000);
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(parseAnswer(received, true));
    });
  });
  return { socket, answer, received: () => received.toString('latin1') };
}

function parseAnswer(bytes: Buffer, closed: boolean): RawAnswer {
  const text = bytes.toString('utf8');
  const end = text.indexOf('\r\n\r\n');
  const [statusLine = '', ...lines] = (end === -1 ? text : text.slice(0, end)).split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  return { status: Number(statusLine.split(' ')[1]), headers, body: end === -1 ? '' : text.slice(end + 4), closed };
}

/** Sends `request` on a new connection (from `localAddress` when given) and waits for the server to answer and close it. */
async function exchange(port: number, request: string, localAddress?: string): Promise<RawAnswer> {
  const { socket, answer } = openConnection(port, localAddress);
  socket.write(request);
  return answer;
}

const portOf = (server: Server) => (server.address() as AddressInfo).port;
const listening = async (server: Server) => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return portOf(server);
};
const closing = (server: Server) => {
  server.closeAllConnections();
  return new Promise<void>((resolve) => server.close(() => resolve()));
};

describe('the API server', () => {
  const kernel = unstartedKernel({ modules: [numbersModule] });
  const server = createApiServer({
    fetch: limitPipelinedRequests(kernel.app.fetch),
    hostname: '127.0.0.1',
    maxConnections: 0,
    maxConnectionsPerAddress: 0,
  });
  // As the kernel does (its default idle timeout).
  closeQuietConnections(server, 120_000);
  let port: number;

  beforeAll(async () => {
    port = await listening(server);
  });
  afterAll(async () => {
    await closing(server);
    await kernel.stop();
  });

  // Node closed an idle keep-alive connection after 5 s: a client or proxy (idle timeouts of 4 s to 60 s) sending on it
  // as it closed saw ECONNRESET (a proxy answers 502).
  it("keeps an idle keep-alive connection open for the idle timeout, past Node's default 5 s, and answers the next request on it", async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const get = () =>
      new Promise<{ status: number | undefined; reused: boolean }>((resolve, reject) => {
        const sent = request({ host: '127.0.0.1', port, path: '/health', agent }, (answer) => {
          answer.resume();
          answer.on('end', () => resolve({ status: answer.statusCode, reused: sent.reusedSocket }));
        });
        sent.on('error', reject);
        sent.end();
      });
    try {
      expect(await get()).toEqual({ status: 200, reused: false });
      await sleep(6_000);
      expect(await get()).toEqual({ status: 200, reused: true });
    } finally {
      agent.destroy();
    }
  });

  it.each([
    ['an HTTP/1.1 request without a Host header', `GET /health?${MARKER} HTTP/1.1\r\n\r\n`, 400, 'invalid_request'],
    ['an invalid Content-Length', `POST /${MARKER} HTTP/1.1\r\nHost: x\r\nContent-Length: 1${MARKER}\r\n\r\n`, 400, 'invalid_request'],
    [
      'two Content-Length headers',
      `POST /${MARKER} HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab`,
      400,
      'invalid_request',
    ],
    ['a malformed request line', `${MARKER}\r\n\r\n`, 400, 'invalid_request'],
    ['an unknown HTTP version', `GET /health HTTP/9.${MARKER}\r\nHost: x\r\n\r\n`, 400, 'invalid_request'],
    [
      'headers over the limit',
      `GET /health HTTP/1.1\r\nHost: x\r\nX-${MARKER}: ${'a'.repeat(20_000)}\r\n\r\n`,
      431,
      'request_header_fields_too_large',
    ],
    ['OPTIONS *', `OPTIONS * HTTP/1.1\r\nHost: ${MARKER}\r\n\r\n`, 400, 'invalid_request'],
    ['a backslash in the path', `GET /a\\${MARKER} HTTP/1.1\r\nHost: x\r\n\r\n`, 400, 'invalid_request'],
    ['a Host header that is not a host', `GET /health HTTP/1.1\r\nHost: a b@${MARKER}\r\n\r\n`, 400, 'invalid_request'],
    [
      'chunk extensions over the limit',
      `POST /x HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n1;${MARKER}${'a'.repeat(20_000)}\r\nx\r\n`,
      413,
      'payload_too_large',
    ],
  ])('answers %s with the CONTRACT.md error body and closes the connection', async (_name, request, status, code) => {
    const answer = await exchange(port, request);
    expect(answer.status).toBe(status);
    expect(answer.headers['content-type']).toBe('application/json');
    expect(answer.headers.connection?.toLowerCase()).toBe('close');
    expect(Number(answer.headers['content-length'])).toBe(Buffer.byteLength(answer.body));
    const body = JSON.parse(answer.body) as { error: { code: string; message: string } };
    expect(body.error.code).toBe(code);
    expect(body.error.message.length).toBeGreaterThan(10);
    expect(answer.body).not.toContain(MARKER);
    expect(answer.closed).toBe(true);
  });

  it('names the header limit in the 431 answer', async () => {
    const answer = await exchange(port, `GET /health HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
    expect(JSON.parse(answer.body)).toMatchObject({ error: { details: { max_header_bytes: expect.any(Number) } } });
  });

  it('serves an absolute-form request target and an HTTP/1.0 request without Host as usual', async () => {
    const absolute = await exchange(port, 'GET http://example.test/health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    expect(absolute.status).toBe(200);
    expect(JSON.parse(absolute.body)).toEqual({ status: 'ok' });
    const old = await exchange(port, 'GET /health HTTP/1.0\r\n\r\n');
    expect(old.status).toBe(200);
  });

  it(`refuses a body of more than ${MAX_JSON_ARRAY_ELEMENTS} array elements before parsing it, and takes one of that many`, async () => {
    const post = (count: number) => {
      const body = `{"values":[${Array(count).fill('7').join(',')}]}`;
      return exchange(
        port,
        `POST /functions/v1/agent-numbers/sum HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`,
      );
    };
    const flood = await post(500_000);
    expect(flood.status).toBe(400);
    expect(JSON.parse(flood.body)).toMatchObject({
      error: { code: 'invalid_request', details: { max_array_elements: MAX_JSON_ARRAY_ELEMENTS } },
    });
    const most = await post(MAX_JSON_ARRAY_ELEMENTS);
    expect(most.status).toBe(200);
    expect(JSON.parse(most.body)).toEqual({ sum: 7 * MAX_JSON_ARRAY_ELEMENTS });
  });
});

describe('answers to requests Node refuses', () => {
  it('answers headers that do not arrive within the headers timeout with 408 and the CONTRACT.md body', async () => {
    const server = createServer({ headersTimeout: 300, requestTimeout: 0, connectionsCheckingInterval: 50 }, (_request, response) =>
      response.end(),
    );
    answerClientErrors(server);
    const port = await listening(server);
    try {
      const { socket, answer } = openConnection(port);
      socket.write(`GET /${MARKER} HTTP/1.1\r\nHost: x\r\n`);
      const timedOut = await answer;
      expect(timedOut.status).toBe(408);
      expect(timedOut.headers['content-type']).toBe('application/json');
      expect(JSON.parse(timedOut.body)).toEqual({ error: { code: 'request_timeout', message: expect.any(String) } });
      expect(timedOut.body).not.toContain(MARKER);
    } finally {
      await closing(server);
    }
  });
});

describe('the connection bound', () => {
  const health = 'GET /health HTTP/1.1\r\nHost: x\r\n\r\n';
  const healthThenClose = 'GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n';

  /** Runs `test` against an API server with these connection bounds on a free port. */
  async function withServer(
    bounds: { maxConnections: number; maxConnectionsPerAddress: number },
    test: (server: Server, port: number) => Promise<void>,
  ): Promise<void> {
    const kernel = unstartedKernel({ modules: [] });
    const server = createApiServer({ fetch: limitPipelinedRequests(kernel.app.fetch), hostname: '127.0.0.1', ...bounds });
    try {
      await test(server, await listening(server));
    } finally {
      await closing(server);
      await kernel.stop();
    }
  }

  /** Opens `count` keep-alive connections to `port` and waits until each has had /health answered. */
  async function holdAnswered(port: number, count: number) {
    const held = Array.from({ length: count }, () => openConnection(port));
    for (const connection of held) connection.socket.write(health);
    await expect.poll(() => held.every((connection) => connection.received().includes('{"status":"ok"}'))).toBe(true);
    return held;
  }

  /** Waits until `server` counts `count` open connections. */
  const untilConnections = (server: Server, count: number) =>
    expect.poll(() => new Promise((resolve) => server.getConnections((_error, open) => resolve(open)))).toBe(count);

  it('closes connections accepted over http.maxConnections unanswered, and accepts new ones once others close', async () => {
    await withServer({ maxConnections: 2, maxConnectionsPerAddress: 0 }, async (server, port) => {
      const held = await holdAnswered(port, 2);
      const refused = openConnection(port);
      refused.socket.write(health);
      const answer = await refused.answer;
      expect(answer.closed).toBe(true);
      expect(refused.received()).toBe('');
      held[0]?.socket.destroy();
      await untilConnections(server, 1);
      expect((await exchange(port, healthThenClose)).status).toBe(200);
      held[1]?.socket.destroy();
    });
  });

  it('answers a connection over http.maxConnectionsPerAddress 429 and closes it, counting each address on its own', async () => {
    await withServer({ maxConnections: 0, maxConnectionsPerAddress: 2 }, async (server, port) => {
      const held = await holdAnswered(port, 2);
      const refused = await exchange(port, health);
      expect(refused).toMatchObject({ status: 429, closed: true, headers: { connection: 'close', 'retry-after': '1' } });
      expect(JSON.parse(refused.body)).toEqual({
        error: {
          code: 'rate_limited',
          message: 'Too many connections from your address (at most 2 at once); close idle ones or reuse them.',
          details: { max_connections_per_address: 2 },
        },
      });
      // Another address is not counted with 127.0.0.1 (127.0.0.2 is loopback on Linux).
      expect((await exchange(port, healthThenClose, '127.0.0.2')).status).toBe(200);
      // A slot freed is taken again.
      held[0]?.socket.destroy();
      await untilConnections(server, 1);
      expect((await exchange(port, healthThenClose)).status).toBe(200);
      held[1]?.socket.destroy();
    });
  });
});
