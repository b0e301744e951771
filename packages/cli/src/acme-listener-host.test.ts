import { mkdtempSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli, type ServeProcess, startServe } from './serve-process.test-support.js';

/**
 * A TCP port free on all interfaces right now, below Linux's ephemeral range
 * (32768–60999): a port the kernel handed out for `listen(0)` went back to
 * that pool once closed, and another test's server could get it while this
 * test checked that nothing listens there.
 */
async function freePort(): Promise<number> {
  for (;;) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    const server = createServer();
    const bound = await new Promise<boolean>((resolve) => {
      server.once('error', () => resolve(false));
      server.listen(port, () => resolve(true));
    });
    if (!bound) continue;
    await new Promise<void>((resolve) => server.close(() => resolve()));
    return port;
  }
}

/** Whether a TCP connection to `host:port` is accepted. */
function accepts(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** This machine's first non-loopback IPv4 address, if it has one. */
const outsideAddress = Object.values(networkInterfaces())
  .flat()
  .find((address) => address?.family === 'IPv4' && !address.internal)?.address;

describe('the ACME HTTP-01 listener under agentinfra serve (#13)', () => {
  let server: ServeProcess | undefined;
  afterEach(async () => {
    await server?.stop('SIGKILL');
    server = undefined;
  });

  async function serve(extra: Record<string, string>) {
    const dir = mkdtempSync(join(tmpdir(), 'agentinfra-acme-host-'));
    const env = {
      AGENTINFRA_CONFIG: join(dir, 'agentinfra.config.json'),
      AGENTINFRA_DATA_DIR: join(dir, 'data'),
      AGENTINFRA_SMTP_PORT: '0',
    };
    expect((await runCli(['init'], { cwd: dir, env })).code).toBe(0);
    server = await startServe(['--port', '0'], { cwd: dir, env: { ...env, ...extra } });
  }

  it.skipIf(outsideAddress === undefined)('binds the API’s host (127.0.0.1 by default), not every interface', async () => {
    const port = await freePort();
    await serve({ AGENTINFRA_ACME_HTTP_PORT: String(port) });
    expect(await accepts('127.0.0.1', port)).toBe(true);
    expect(await accepts(outsideAddress as string, port)).toBe(false);
  });

  it('is not opened when the gateway uses dns-01', async () => {
    const port = await freePort();
    // dns-01 needs a DNS provider to start: an RFC 2136 server that is never called in this test.
    await serve({
      AGENTINFRA_ACME_HTTP_PORT: String(port),
      AGENTINFRA_ACME_CHALLENGE: 'dns-01',
      AGENTINFRA_DNS01_RFC2136_SERVER: '127.0.0.1:53',
      AGENTINFRA_DNS01_RFC2136_KEY_NAME: 'agentinfra.',
      AGENTINFRA_DNS01_RFC2136_KEY_SECRET: Buffer.alloc(32, 1).toString('base64'),
    });
    expect(await accepts('127.0.0.1', port)).toBe(false);
  });
});
