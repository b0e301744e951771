import { existsSync, mkdirSync, mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCliInProcess } from './serve-process.test-support.js';

const mode = (path: string) => statSync(path).mode & 0o777;

// Operator walkthrough: `agentinfra -c /path/agentinfra.config.json backup` run from another directory
// created an empty ./.agentinfra/agentinfra.db there and backed it up ("0 rows in 0 tables", exit 0);
// `audit verify` did the same. The data directory was 0755 and the database 0644, also after restore.
describe('agentinfra -c <config file> run from another directory', () => {
  const root = mkdtempSync(join(tmpdir(), 'agentinfra-config-dir-'));
  const home = join(root, 'srv');
  const elsewhere = join(root, 'elsewhere');
  mkdirSync(home);
  mkdirSync(elsewhere);
  const file = join(home, 'agentinfra.config.json');
  const dataDir = join(home, '.agentinfra');
  // Every command runs in this process (runCliInProcess), its current directory `elsewhere`: the paths it resolves are
  // the point, not the process.
  const cli = (args: string[], env: Record<string, string> = {}) =>
    runCliInProcess(['-c', file, ...args], { cwd: elsewhere, env: { AGENTINFRA_DATA_DIR: '', AGENTINFRA_SMTP_PORT: '0', ...env } });

  it('uses the data directory next to the config file, refuses to back up or verify a missing database, and keeps it private', async () => {
    expect((await cli(['init'])).code).toBe(0);

    const backup = await cli(['backup', '--out', 'none.tar.gz']);
    expect(backup.code).toBe(2);
    expect(backup.stderr).toContain(`no database at ${join(dataDir, 'agentinfra.db')}`);
    const verify = await cli(['audit', 'verify']);
    expect(verify.code).toBe(2);
    expect(verify.stderr).toContain(`no database at ${join(dataDir, 'agentinfra.db')}`);
    expect(existsSync(join(elsewhere, '.agentinfra'))).toBe(false);
    expect(existsSync(join(dataDir, 'agentinfra.db'))).toBe(false);
    expect(existsSync(join(elsewhere, 'none.tar.gz'))).toBe(false);

    expect((await cli(['agents', 'create', '--agent', 'alice', '--name', 'Alice'])).code).toBe(0);
    expect(existsSync(join(elsewhere, '.agentinfra'))).toBe(false);
    expect(mode(dataDir)).toBe(0o700);
    expect(mode(join(dataDir, 'agentinfra.db'))).toBe(0o600);

    const verified = await cli(['audit', 'verify']);
    expect(verified.code).toBe(0);
    expect(verified.stdout).toMatch(/^audit chain ok: [1-9]\d* events checked/);
    const made = await cli(['backup', '--out', 'b.tar.gz']);
    expect(made.code).toBe(0);
    expect(made.stdout).toContain(`backup written to ${join(elsewhere, 'b.tar.gz')}`);
    expect(made.stdout).not.toMatch(/(?<!\d)0 rows/);

    // A relative AGENTINFRA_DATA_DIR stays relative to the current directory.
    const restored = await cli(['restore', '--from', 'b.tar.gz'], { AGENTINFRA_DATA_DIR: 'restored' });
    expect(restored.code).toBe(0);
    expect(mode(join(elsewhere, 'restored'))).toBe(0o700);
    expect(mode(join(elsewhere, 'restored', 'agentinfra.db'))).toBe(0o600);
  }, 60_000);

  it('stops, naming both folders, when the database is still where the current directory used to put it', async () => {
    const old = mkdtempSync(join(tmpdir(), 'agentinfra-config-old-'));
    const conf = join(old, 'conf');
    const cwd = join(old, 'run');
    mkdirSync(conf);
    mkdirSync(cwd);
    const oldFile = join(conf, 'agentinfra.config.json');
    const run = (args: string[]) =>
      runCliInProcess(['-c', oldFile, ...args], { cwd, env: { AGENTINFRA_DATA_DIR: '', AGENTINFRA_SMTP_PORT: '0' } });
    expect((await runCliInProcess(['-c', oldFile, 'init'], { cwd, env: { AGENTINFRA_DATA_DIR: '' } })).code).toBe(0);
    // The database as an earlier version made it: in <cwd>/.agentinfra.
    expect((await runCliInProcess(['-c', oldFile, 'migrate'], { cwd, env: { AGENTINFRA_DATA_DIR: join(cwd, '.agentinfra') } })).code).toBe(
      0,
    );
    const refused = await run(['agents', 'create', '--agent', 'bob', '--name', 'Bob']);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(`now means ${join(conf, '.agentinfra')}`);
    expect(refused.stderr).toContain(`the database is in ${join(cwd, '.agentinfra')}`);
    expect(existsSync(join(conf, '.agentinfra', 'agentinfra.db'))).toBe(false);
  }, 60_000);
});
