import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { type AddressInfo, connect, createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { redisAvailability, testRedisUrl } from '@agentinfra/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { binPath, freshKeys, type ServeProcess, startServe } from './serve-process.test-support.js';

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
        ...freshKeys(),
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

/**
 * A TCP proxy to Redis that holds every connection (reading nothing) until
 * `release`: `serve` waits for its Redis while building the kernel, so the
 * first connection marks a moment inside start-up.
 */
async function startHeldRedisProxy(target: URL) {
  const held: Socket[] = [];
  let released = false;
  let onConnection: () => void = () => undefined;
  const connected = new Promise<void>((resolve) => (onConnection = resolve));
  const pipeUp = (client: Socket) => {
    const upstream = connect({ host: target.hostname, port: Number(target.port || 6379) });
    client.pipe(upstream).pipe(client);
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
    client.resume();
  };
  const server: Server = createServer((client) => {
    client.pause();
    onConnection();
    if (released) pipeUp(client);
    else held.push(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    connected,
    release() {
      released = true;
      for (const client of held.splice(0)) pipeUp(client);
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

// Review: SIGUSR2 (and SIGTERM/SIGINT) had no handler until the kernel was built, so SIGUSR2 during start-up
// killed `serve` (exit 140) and SIGTERM skipped the orderly stop.
describe.runIf(process.platform !== 'win32' && redisAvailability().available)('agentinfra serve and signals during start-up', () => {
  function spawnServe(dir: string, port: number) {
    const redis = new URL(testRedisUrl());
    const child = spawn(process.execPath, [binPath, 'serve', '--port', '0'], {
      cwd: dir,
      env: {
        ...process.env,
        AGENTINFRA_DATA_DIR: join(dir, 'data'),
        ...freshKeys(),
        AGENTINFRA_REDIS_URL: `redis://127.0.0.1:${port}${redis.pathname}`,
        AGENTINFRA_REDIS_KEY_PREFIX: `startup-signal-${randomBytes(4).toString('hex')}:`,
        AGENTINFRA_LOG_LEVEL: 'warn',
        AGENTINFRA_LOG_FORMAT: 'json',
        AGENTINFRA_ACME_HTTP_PORT: '0',
        AGENTINFRA_SMTP_PORT: '0',
      },
    });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      child.on('exit', (code, signal) => resolve({ code, signal })),
    );
    return { child, output: () => output, exited };
  }

  it('keeps SIGUSR2 sent during start-up and switches to debug once the logger exists', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'agentinfra-startup-signal-'));
    const proxy = await startHeldRedisProxy(new URL(testRedisUrl()));
    const serve = spawnServe(dir, proxy.port);
    try {
      await proxy.connected;
      serve.child.kill('SIGUSR2');
      await new Promise((resolve) => setTimeout(resolve, 200));
      proxy.release();
      await waitFor(
        () => /listening on http/.test(serve.output()) || serve.child.exitCode !== null || serve.child.signalCode !== null,
        'the listening line',
      );
      expect(serve.child.signalCode).toBeNull();
      expect(serve.output()).toContain('"log_level":"debug"');
      serve.child.kill('SIGTERM');
      expect(await serve.exited).toEqual({ code: 0, signal: null });
    } finally {
      serve.child.kill('SIGKILL');
      await proxy.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 30_000);

  it('stops cleanly, exit 0 without listening, on SIGTERM during start-up', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'agentinfra-startup-signal-'));
    const proxy = await startHeldRedisProxy(new URL(testRedisUrl()));
    const serve = spawnServe(dir, proxy.port);
    try {
      await proxy.connected;
      serve.child.kill('SIGTERM');
      await new Promise((resolve) => setTimeout(resolve, 200));
      proxy.release();
      expect(await serve.exited).toEqual({ code: 0, signal: null });
      expect(serve.output()).not.toContain('listening on');
      expect(serve.output()).toContain('SIGTERM during start-up');
    } finally {
      serve.child.kill('SIGKILL');
      await proxy.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 30_000);
});
