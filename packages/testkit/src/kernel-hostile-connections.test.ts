import { connect, type Socket } from 'node:net';
import { MAX_PIPELINED_REQUESTS } from '@agentinfra/core';
import { startTestKernel, type TestKernel } from '@agentinfra/core/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sqlDatabases } from './sql-databases.js';

/** A socket to `url` that never reads unless asked; resolves `closed` with what came back once the server closes it. */
function openSocket(url: string) {
  const { hostname, port } = new URL(url);
  const socket: Socket = connect(Number(port), hostname);
  const started = Date.now();
  let received = '';
  socket.on('data', (chunk: Buffer) => {
    received += chunk.toString('latin1');
  });
  socket.on('error', () => undefined);
  const closed = new Promise<{ received: string; afterMs: number }>((resolve) => {
    socket.on('close', () => resolve({ received, afterMs: Date.now() - started }));
  });
  return { socket, closed };
}

const statusLines = (text: string) => text.match(/HTTP\/1\.1 \d{3}/g) ?? [];

describe('kernel against hostile connections', () => {
  let server: TestKernel;
  let cleanup: () => Promise<void>;

  beforeAll(async () => {
    const fixture = await sqlDatabases()[0]!.create();
    cleanup = fixture.cleanup;
    server = await startTestKernel({ modules: [], adapters: { sql: fixture.db } });
  });
  afterAll(async () => {
    await server.stop();
    await cleanup();
  });

  it(`closes a connection that pipelines more than ${MAX_PIPELINED_REQUESTS} requests without reading, having handled at most that many`, async () => {
    const { socket, closed } = openSocket(server.url);
    socket.write('GET /openapi.json HTTP/1.1\r\nHost: x\r\n\r\n'.repeat(1_800));
    const { received, afterMs } = await closed;
    expect(statusLines(received).length).toBeLessThanOrEqual(MAX_PIPELINED_REQUESTS);
    expect(afterMs).toBeLessThan(5_000);
    const health = await fetch(`${server.url}/health`);
    expect(health.status).toBe(200);
  });

  it('still answers requests pipelined within the limit, in order', async () => {
    const { socket, closed } = openSocket(server.url);
    socket.write(`${'GET /health HTTP/1.1\r\nHost: x\r\n\r\n'.repeat(10)}GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
    const { received } = await closed;
    expect(statusLines(received)).toEqual(Array(11).fill('HTTP/1.1 200'));
  });

  it('serves /openapi.json as the same document every time', async () => {
    const [first, second] = await Promise.all([fetch(`${server.url}/openapi.json`), fetch(`${server.url}/openapi.json`)]);
    expect(first.headers.get('content-type')).toMatch(/^application\/json/);
    const text = await first.text();
    expect(text).toBe(await second.text());
    expect(JSON.parse(text)).toEqual(server.kernel.openapi());
  });

  it.each([
    ['a chunked body', 'transfer-encoding: chunked\r\n\r\n1\r\nx\r\n'],
    ['a declared length', 'content-length: 1000000\r\n\r\nx'],
  ])('refuses a GET with %s at once with 400 and closes the connection while the client still sends', async (_name, rest) => {
    const { socket, closed } = openSocket(server.url);
    socket.write(`GET /health HTTP/1.1\r\nHost: x\r\n${rest}`);
    const drip = setInterval(() => socket.write('1\r\nx\r\n'), 100);
    try {
      const { received, afterMs } = await closed;
      expect(received).toMatch(/^HTTP\/1\.1 400 /);
      expect(received).toContain('"code":"invalid_request"');
      expect(received.toLowerCase()).toContain('connection: close');
      expect(afterMs).toBeLessThan(5_000);
    } finally {
      clearInterval(drip);
    }
  });
});
