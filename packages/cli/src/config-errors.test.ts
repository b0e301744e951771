import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { freshKeys, runCli, runCliInProcess, startServe } from './serve-process.test-support.js';

// #13: three bad variables reported only the first, as "Invalid configuration in …/agentinfra.config.json",
// and every error ended with "Run `agentinfra init`" even when a config existed (init then refuses).
describe('agentinfra configuration errors', () => {
  const quiet = { AGENTINFRA_ACME_HTTP_PORT: '0', AGENTINFRA_SMTP_PORT: '0' };
  const keys = {
    ...freshKeys(),
  };

  /** A folder holding a valid config file (what `init` writes: a fresh bridge key and master key, mode 0600). */
  function withConfig(): { dir: string; file: string } {
    const dir = mkdtempSync(join(tmpdir(), 'agentinfra-config-errors-'));
    const file = join(dir, 'agentinfra.config.json');
    const { AGENTINFRA_BRIDGE_KEY: bridgeKey, AGENTINFRA_MASTER_KEY: masterKey } = freshKeys();
    writeFileSync(file, JSON.stringify({ bridgeKey, masterKey }), { mode: 0o600 });
    return { dir, file };
  }

  it('lists every bad variable with its name, and does not suggest init when a config exists', async () => {
    const { dir, file } = withConfig();
    const env = { ...quiet, AGENTINFRA_CONFIG: file, AGENTINFRA_DATA_DIR: join(dir, 'data') };
    const result = await runCli(['migrate'], {
      cwd: dir,
      env: { ...env, AGENTINFRA_PORT: 'eighty', AGENTINFRA_HOST: '', AGENTINFRA_DATABASE_POOL_MAX: '1', AGENTINFRA_LOG_LEVEL: 'loud' },
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('Invalid configuration (3 problems):');
    expect(result.stderr).toContain('port from AGENTINFRA_PORT: expected an integer, got "eighty"');
    expect(result.stderr).toMatch(/database\.poolMax from AGENTINFRA_DATABASE_POOL_MAX: .*at least 2/);
    expect(result.stderr).toMatch(/log\.level from AGENTINFRA_LOG_LEVEL: /);
    expect(result.stderr).not.toContain('Invalid configuration in');
    expect(result.stderr).not.toContain('agentinfra init');
  });

  it('names the file key of a bad file value', async () => {
    const { dir, file } = withConfig();
    const env = { ...quiet, AGENTINFRA_CONFIG: file, AGENTINFRA_DATA_DIR: join(dir, 'data') };
    const result = await runCliInProcess(['migrate'], { cwd: dir, env: { ...env, AGENTINFRA_BRIDGE_KEY: 'short' } });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/bridgeKey from AGENTINFRA_BRIDGE_KEY: must be at least 16 characters/);
    expect(result.stderr).not.toContain('short');
  });

  // Review: a malformed PostgreSQL URL printed a raw zod issue array and exited 1.
  it.each([['postgres://u:s3cretpw@[bad/x'], ['postgres://u:s3cretpw@db.example:99999/x']])(
    'reports the malformed database URL %s in one line, exit 2, without the password',
    async (url) => {
      const dir = mkdtempSync(join(tmpdir(), 'agentinfra-config-errors-'));
      const env = { ...quiet, ...keys, AGENTINFRA_DATA_DIR: join(dir, 'data'), AGENTINFRA_DATABASE_URL: url };
      const result = await runCliInProcess(['migrate'], { cwd: dir, env });
      expect(result.stderr).toMatch(/Invalid configuration \(1 problem\):\n {2}- databaseUrl from AGENTINFRA_DATABASE_URL: .+/);
      expect(result.stderr).not.toContain('s3cretpw');
      expect(result.stderr).not.toContain('"code"');
      expect(result.code).toBe(2);
    },
  );

  it('suggests init only when there is no config file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'agentinfra-config-errors-'));
    const file = join(dir, 'agentinfra.config.json');
    const result = await runCliInProcess(['migrate'], { cwd: dir, env: quiet });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`bridgeKey not set (set it in ${file} or AGENTINFRA_BRIDGE_KEY)`);
    expect(result.stderr).toContain(`No config file at ${file}: run \`agentinfra init\``);
  });

  // Walkthrough: `AGENTINFRA_BRIDGE_KEY=… AGENTINFRA_MASTER_KEY=… agentinfra -c /nonexistent.json serve` started on the
  // defaults without a word; the missing file was named only when startup failed for another reason.
  it('refuses a config file named with -c or AGENTINFRA_CONFIG that does not exist, in every command that reads the config', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'agentinfra-config-errors-'));
    const missing = join(dir, 'missing.json');
    const env = { ...quiet, ...keys, AGENTINFRA_DATA_DIR: join(dir, 'data') };
    const archive = join(dir, 'backup.tar.gz');
    const commands = [
      ['migrate'],
      ['agents', 'create', '--agent', 'alice', '--name', 'Alice'],
      ['issue-device', '--agent', 'alice', '--label', 'laptop'],
      ['audit', 'verify'],
      ['backup', '--out', archive],
      ['restore', '--from', archive],
    ];
    // `serve` in processes of their own (killed if they start all the same); the commands that finish in this one.
    const serves = Promise.all([
      runCli(['-c', missing, 'serve', '--port', '0'], { cwd: dir, env, timeoutMs: 30_000 }),
      runCli(['serve', '--port', '0'], { cwd: dir, env: { ...env, AGENTINFRA_CONFIG: missing }, timeoutMs: 30_000 }),
    ]);
    const results = [];
    for (const args of commands) results.push(await runCliInProcess(['-c', missing, ...args], { cwd: dir, env }));
    results.push(...(await serves));
    expect(results).toHaveLength(commands.length + 2);
    for (const result of results) {
      expect(result.code).toBe(2);
      expect(result.stdout).toBe('');
      expect(result.stderr).toBe(
        `agentinfra: config file ${missing} (named by --config or AGENTINFRA_CONFIG) does not exist: check the path, ` +
          `or write a starter config there with \`agentinfra -c ${missing} init\`.\n`,
      );
    }
    expect(existsSync(join(dir, 'data'))).toBe(false);
  }, 60_000);

  it('serve --init on a fresh folder writes the default config and serves (README Quick start)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'agentinfra-config-errors-'));
    const server = await startServe(['--init', '--port', '0'], { cwd: dir, env: quiet, timeoutMs: 60_000 });
    try {
      expect(server.output()).toContain(`Wrote ${join(dir, 'agentinfra.config.json')} (mode 0600).`);
      expect(existsSync(join(dir, '.agentinfra', 'agentinfra.db'))).toBe(true);
    } finally {
      await server.stop();
    }
  }, 60_000);

  // Walkthrough: `AGENTINFRA_ACME_CHALLENGE=dns-01 agentinfra serve` named the missing DNS provider and exited 1.
  it('exits 2 on a configuration error found while the modules start', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'agentinfra-config-errors-'));
    const env = { ...quiet, ...keys, AGENTINFRA_DATA_DIR: join(dir, 'data'), AGENTINFRA_ACME_CHALLENGE: 'dns-01' };
    const result = await runCli(['serve', '--port', '0'], { cwd: dir, env, timeoutMs: 30_000 });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('agentinfra: gateway.challenge is dns-01 but no DNS provider is set up');
    expect(result.stdout).not.toContain('listening on');
  }, 60_000);
});
