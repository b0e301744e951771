import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from './serve-process.test-support.js';

// #13: three bad variables reported only the first, as "Invalid configuration in …/agentinfra.config.json",
// and every error ended with "Run `agentinfra init`" even when a config existed (init then refuses).
describe('agentinfra configuration errors', () => {
  const quiet = { AGENTINFRA_ACME_HTTP_PORT: '0', AGENTINFRA_SMTP_PORT: '0' };

  it('lists every bad variable with its name, and does not suggest init when a config exists', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'agentinfra-config-errors-'));
    const env = { ...quiet, AGENTINFRA_CONFIG: join(dir, 'agentinfra.config.json'), AGENTINFRA_DATA_DIR: join(dir, 'data') };
    expect((await runCli(['init'], { cwd: dir, env })).code).toBe(0);
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
    const dir = mkdtempSync(join(tmpdir(), 'agentinfra-config-errors-'));
    const file = join(dir, 'agentinfra.config.json');
    const env = { ...quiet, AGENTINFRA_CONFIG: file, AGENTINFRA_DATA_DIR: join(dir, 'data') };
    expect((await runCli(['init'], { cwd: dir, env })).code).toBe(0);
    const result = await runCli(['migrate'], { cwd: dir, env: { ...env, AGENTINFRA_BRIDGE_KEY: 'short' } });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/bridgeKey from AGENTINFRA_BRIDGE_KEY: must be at least 16 characters/);
    expect(result.stderr).not.toContain('short');
  });

  it('suggests init only when there is no config file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'agentinfra-config-errors-'));
    const file = join(dir, 'agentinfra.config.json');
    const result = await runCli(['migrate'], { cwd: dir, env: { ...quiet, AGENTINFRA_CONFIG: file } });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`bridgeKey not set (set it in ${file} or AGENTINFRA_BRIDGE_KEY)`);
    expect(result.stderr).toContain(`No config file at ${file}: run \`agentinfra init\``);
  });
});
