import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const cli = fileURLToPath(new URL('../../../cli/dist/bin.js', import.meta.url));

/** The bridge key every test server starts with. */
export const BRIDGE_KEY = 'bk_client_test_bridge_key_0123456789abcdef';

/** An `agentinfra serve` child process on a free port of 127.0.0.1 (embedded SQLite, local blobs). */
export interface TestServer {
  url: string;
  child: ChildProcess;
  stop(): Promise<void>;
}

/**
 * Starts the built CLI (`pnpm test` builds first) with a fresh data folder
 * and waits for its `listening on` line.
 * @param env extra variables, e.g. `AGENTINFRA_RATE_LIMIT_PER_MINUTE`.
 */
export function startServer(env: Record<string, string> = {}): Promise<TestServer> {
  const dir = mkdtempSync(join(tmpdir(), 'agentinfra-client-'));
  // A config file of its own (empty: the keys come from the environment), so no agentinfra.config.json around is read.
  const config = join(dir, 'agentinfra.config.json');
  writeFileSync(config, '{}');
  const child = spawn(process.execPath, [cli, 'serve'], {
    env: {
      ...process.env,
      AGENTINFRA_BRIDGE_KEY: BRIDGE_KEY,
      AGENTINFRA_MASTER_KEY: Buffer.alloc(32, 9).toString('base64'),
      AGENTINFRA_DATA_DIR: dir,
      AGENTINFRA_CONFIG: config,
      AGENTINFRA_PORT: '0',
      AGENTINFRA_LOG_LEVEL: 'warn',
      AGENTINFRA_ACME_HTTP_PORT: '0',
      AGENTINFRA_SMTP_PORT: '0',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return new Promise((resolve, reject) => {
    let output = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`serve did not start in time:\n${output}`));
    }, 30_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const match = /listening on (http:\/\/[^\s)]+)/.exec(output);
      if (!match?.[1]) return;
      clearTimeout(timer);
      child.removeAllListeners('exit');
      resolve({
        url: match[1],
        child,
        stop: () =>
          new Promise((done) => {
            if (child.exitCode !== null) return done();
            child.once('exit', () => done());
            child.kill('SIGTERM');
          }),
      });
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`serve exited with ${code}:\n${output}`));
    });
  });
}
