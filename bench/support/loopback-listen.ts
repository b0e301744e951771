import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * Serves `server` on a free loopback port for a benchmark's helper process:
 * keeps idle connections open for 60 s (the benchmark reuses them), prints
 * `listening on http://127.0.0.1:<port>` (what serve-process.ts's
 * `startProcess` waits for), and closes every connection and exits on SIGTERM.
 */
export function listenOnLoopback(server: Server): void {
  server.keepAliveTimeout = 60_000;
  server.listen(0, '127.0.0.1', () => {
    process.stdout.write(`listening on http://127.0.0.1:${(server.address() as AddressInfo).port}\n`);
  });
  process.once('SIGTERM', () => {
    server.close(() => process.exit(0));
    server.closeAllConnections();
  });
}
