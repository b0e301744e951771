import { connect, createServer, type Socket } from 'node:net';

/** A TCP proxy on 127.0.0.1 in front of a test service, that a test can break the way networks break. */
export interface TcpProxy {
  /** The proxy's port: point the client at `127.0.0.1:<port>` instead of the service. */
  readonly port: number;
  /** The connections open now stop forwarding without closing (a dead host, a firewall dropping packets); new ones still work. */
  silence(): void;
  /** Resets every connection and stops listening (a crashed service, a refused connection). */
  cut(): Promise<void>;
}

/**
 * Starts a {@link TcpProxy} to `host:port` (a test's PostgreSQL or Redis).
 * @returns once it listens.
 */
export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const sockets = new Set<Socket>();
  const silenced = new WeakSet<Socket>();
  const server = createServer((client) => {
    const upstream = connect(target.port, target.host);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('error', () => undefined);
      socket.on('close', () => sockets.delete(socket));
    }
    client.on('data', (chunk: Buffer) => {
      if (!silenced.has(client)) upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => {
      if (!silenced.has(client)) client.write(chunk);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as { port: number }).port,
    silence() {
      for (const socket of sockets) silenced.add(socket);
    },
    async cut() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const socket of sockets) socket.destroy();
      await closed;
    },
  };
}
