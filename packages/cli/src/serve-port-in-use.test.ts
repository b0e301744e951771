import { mkdtempSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { freshKeys, runCli } from './serve-process.test-support.js';

/** A TCP listener on 127.0.0.1 at a free port, holding it until closed. */
async function holdPort(): Promise<{ server: Server; port: number }> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as { port: number }).port };
}

// Walkthrough: with 8787 taken, `serve` printed `agentinfra: listen EADDRINUSE: address already in use 127.0.0.1:8787`
// and exited 1, with no word on how to choose another port.
describe('agentinfra serve on a port in use', () => {
  let held: Server | undefined;
  afterEach(async () => {
    await new Promise((resolve) => held?.close(resolve) ?? resolve(undefined));
    held = undefined;
  });

  function serve(args: string[], extra: Record<string, string> = {}) {
    const dir = mkdtempSync(join(tmpdir(), 'agentinfra-port-in-use-'));
    const env = {
      ...freshKeys(),
      AGENTINFRA_DATA_DIR: join(dir, 'data'),
      AGENTINFRA_ACME_HTTP_PORT: '0',
      AGENTINFRA_SMTP_PORT: '0',
      ...extra,
    };
    return runCli(['serve', ...args], { cwd: dir, env, timeoutMs: 30_000 });
  }

  it('stops with one line naming the address and how to choose another port, exit 2', async () => {
    const { server, port } = await holdPort();
    held = server;
    const result = await serve(['--port', String(port)]);
    expect(result.stderr).toBe(
      `agentinfra: cannot listen on 127.0.0.1:${port}: the address is already in use (another agentinfra serve, or another ` +
        'program); choose another port with --port N (from the repository: pnpm start --port N) or AGENTINFRA_PORT.\n',
    );
    expect(result.code).toBe(2);
  }, 30_000);

  it('names AGENTINFRA_METRICS_PORT when the metrics listener’s port is the one in use', async () => {
    const { server, port } = await holdPort();
    held = server;
    const result = await serve(['--port', '0'], { AGENTINFRA_METRICS_PORT: String(port) });
    expect(result.stderr).toBe(
      `agentinfra: cannot listen on 127.0.0.1:${port} for /metrics: the address is already in use; choose another port ` +
        'with AGENTINFRA_METRICS_PORT (metrics.port).\n',
    );
    expect(result.code).toBe(2);
  }, 30_000);
});
