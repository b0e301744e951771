import { createSocket } from 'node:dgram';
import { createServer } from 'node:net';

/** A TCP port on 127.0.0.1 that was free a moment ago (the OS picks it). */
export async function freeTcpPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** Whether UDP `port` on 127.0.0.1 can be bound right now. */
async function udpPortFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createSocket('udp4');
    socket.once('error', () => resolve(false));
    socket.bind(port, '127.0.0.1', () => socket.close(() => resolve(true)));
  });
}

/** A port free for both TCP and UDP on 127.0.0.1 (for DNS servers, which answer on both). */
export async function freeDnsPort(): Promise<number> {
  for (let attempt = 0; attempt < 20; attempt += 1) {
    const port = await freeTcpPort();
    if (await udpPortFree(port)) return port;
  }
  throw new Error('No port free for both TCP and UDP on 127.0.0.1 after 20 tries.');
}
