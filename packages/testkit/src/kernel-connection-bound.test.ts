import { connect } from 'node:net';
import { startTestKernel } from '@agentinfra/core/testing';
import { describe, expect, it } from 'vitest';
import { embeddedDatabase } from './sql-databases.js';

/** Status of `GET /health` on a new connection to `url`, answered and closed. */
function healthStatus(url: string): Promise<number> {
  const { port, hostname } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    let received = '';
    socket.on('data', (chunk: Buffer) => {
      received += chunk.toString('latin1');
    });
    socket.on('error', reject);
    socket.on('close', () => resolve(Number(received.split(' ')[1])));
    socket.write('GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
  });
}

/** The kernel's listener keeps http.maxConnectionsPerAddress, except behind reverse proxies (every peer is a proxy). */
describe('the per-address connection bound of kernel.listen', () => {
  it.each([
    { trustProxyHops: 0, second: 429 },
    { trustProxyHops: 1, second: 200 },
  ])('with trustProxyHops $trustProxyHops answers a second connection from one address $second', async ({ trustProxyHops, second }) => {
    const fixture = await embeddedDatabase()[0]!.create();
    const server = await startTestKernel({
      modules: [],
      adapters: { sql: fixture.db },
      config: { http: { maxConnectionsPerAddress: 1, trustProxyHops } },
    });
    const { port, hostname } = new URL(server.url);
    const held = connect(Number(port), hostname);
    try {
      await new Promise((resolve) => held.once('connect', resolve));
      expect(await healthStatus(server.url)).toBe(second);
    } finally {
      held.destroy();
      await server.stop();
      await fixture.cleanup();
    }
  });
});
