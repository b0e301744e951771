import { createServer, type Server } from 'node:http';
import { type AddressInfo, connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { limitConnectionsPerAddress, REFUSED_CONNECTIONS_PER_ADDRESS } from './connection-limit.js';

/** A server answering 200, or 429 on connections `limitConnectionsPerAddress` refused (as the API server does). */
function startServer(max: number, refusedConnectionMs: number): Promise<{ server: Server; port: number }> {
  const server = createServer((incoming, outgoing) => {
    outgoing.writeHead(limit.refused(incoming.socket) ? 429 : 200, { connection: 'close' }).end();
  });
  const limit = limitConnectionsPerAddress(server, max, { refusedConnectionMs });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ server, port: (server.address() as AddressInfo).port })));
}

/** A connection to `port` and when it closed (ms after it opened), or null while it is open. */
function open(port: number): { socket: Socket; closedAfter: () => number | null; closed: Promise<number> } {
  const started = Date.now();
  let closedAt: number | null = null;
  const socket = connect(port, '127.0.0.1');
  socket.on('error', () => undefined);
  const closed = new Promise<number>((resolve) =>
    socket.on('close', () => {
      closedAt = Date.now() - started;
      resolve(closedAt);
    }),
  );
  return { socket, closedAfter: () => closedAt, closed };
}

describe('limitConnectionsPerAddress', () => {
  const servers: Server[] = [];
  afterEach(async () => {
    for (const server of servers.splice(0)) {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  // Review: the refused connection's time was an idle timeout, so a byte every few seconds kept it open until the
  // 60 s header timeout: one address could fill http.maxConnections with refused connections.
  it('closes a refused connection after its time in all, however it trickles its request', async () => {
    const { server, port } = await startServer(1, 400);
    servers.push(server);
    const held = open(port);
    held.socket.write('GET / HTTP/1.1\r\nHost: x\r\n');
    await new Promise((resolve) => held.socket.once('connect', resolve));
    const refused = open(port);
    refused.socket.write('GET / HTTP/1.1\r\n');
    const trickle = setInterval(() => refused.socket.write('X-A: b\r\n'), 100);
    try {
      expect(await refused.closed).toBeLessThan(2_000);
    } finally {
      clearInterval(trickle);
    }
    expect(held.closedAfter()).toBeNull();
    held.socket.destroy();
  });

  it(`closes connections at once, unanswered, past ${REFUSED_CONNECTIONS_PER_ADDRESS} refused ones waiting`, async () => {
    const { server, port } = await startServer(1, 10_000);
    servers.push(server);
    const held = open(port);
    await new Promise((resolve) => held.socket.once('connect', resolve));
    const waiting = Array.from({ length: REFUSED_CONNECTIONS_PER_ADDRESS }, () => open(port));
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(waiting.every((connection) => connection.closedAfter() === null)).toBe(true);
    const over = open(port);
    let answered = '';
    over.socket.on('data', (chunk: Buffer) => {
      answered += chunk.toString('latin1');
    });
    over.socket.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
    expect(await over.closed).toBeLessThan(2_000);
    expect(answered).toBe('');
    // A waiting one still gets its 429.
    const first = waiting[0];
    let reply = '';
    first?.socket.on('data', (chunk: Buffer) => {
      reply += chunk.toString('latin1');
    });
    first?.socket.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
    await first?.closed;
    expect(reply).toMatch(/^HTTP\/1\.1 429 /);
    for (const connection of [held, ...waiting]) connection.socket.destroy();
  });
});
