import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ServeProcess, startServe } from './serve-process.test-support.js';

async function waitFor(check: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

// #15: the log level changes at run time with SIGUSR2, and back.
describe.runIf(process.platform !== 'win32')('agentinfra serve and SIGUSR2', () => {
  const dir = mkdtempSync(join(tmpdir(), 'agentinfra-loglevel-'));
  let server: ServeProcess;

  beforeAll(async () => {
    server = await startServe(['--port', '0'], {
      cwd: dir,
      env: {
        AGENTINFRA_DATA_DIR: dir,
        AGENTINFRA_BRIDGE_KEY: `bk_${randomBytes(32).toString('base64url')}`,
        AGENTINFRA_MASTER_KEY: randomBytes(32).toString('base64'),
        AGENTINFRA_LOG_LEVEL: 'warn',
        AGENTINFRA_LOG_FORMAT: 'json',
        AGENTINFRA_ACME_HTTP_PORT: '0',
        AGENTINFRA_SMTP_PORT: '0',
      },
    });
  });

  afterAll(async () => {
    if (server && server.child.exitCode === null) await server.stop('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  it('switches to debug and back to the configured level', async () => {
    const requests = () =>
      server
        .output()
        .split('\n')
        .filter((line) => line.includes('"msg":"request"')).length;
    await fetch(`${server.url}/health`);
    expect(requests()).toBe(0);
    server.child.kill('SIGUSR2');
    await waitFor(() => server.output().includes('"log_level":"debug"'), 'the switch to debug');
    await fetch(`${server.url}/health`);
    await waitFor(() => requests() === 1, 'a request line at debug');
    server.child.kill('SIGUSR2');
    await waitFor(() => /"previous_level":"debug","log_level":"warn"/.test(server.output()), 'the switch back');
    // pino's own `level` (the line's, 40 = warn) is the only one: a second `level` key would make parsers read "debug".
    const switches = server
      .output()
      .split('\n')
      .filter((line) => line.includes('"msg":"log level changed"'))
      .map((line) => JSON.parse(line) as { level: unknown; log_level: unknown });
    expect(switches.map((line) => [line.level, line.log_level])).toEqual([
      [40, 'debug'],
      [40, 'warn'],
    ]);
    await fetch(`${server.url}/health`);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(requests()).toBe(1);
  });
});
