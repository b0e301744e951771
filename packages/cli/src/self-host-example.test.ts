import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const folder = fileURLToPath(new URL('../../../examples/self-host/', import.meta.url));
const analyzeFound = spawnSync('systemd-analyze', ['--version'], { stdio: 'ignore' }).status === 0;
if (!analyzeFound) {
  const line = '[agentinfra] systemd-analyze is not installed (Debian: systemd)';
  if (process.env.CI) throw new Error(line);
  console.warn(`${line}; skipping the unit check`);
}

// #15: examples/self-host's systemd unit is valid and hardened.
describe('examples/self-host', () => {
  const dir = mkdtempSync(join(tmpdir(), 'agentinfra-unit-'));
  const unit = readFileSync(join(folder, 'agentinfra.service'), 'utf8');

  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it.runIf(analyzeFound)('passes systemd-analyze verify without a warning', () => {
    // verify insists that ExecStart's program exists: point it at a stub in place of the installed binary.
    const stub = join(dir, 'agentinfra');
    writeFileSync(stub, '#!/bin/sh\nexit 0\n');
    chmodSync(stub, 0o755);
    const file = join(dir, 'agentinfra.service');
    writeFileSync(file, unit.replaceAll('/usr/local/bin/agentinfra', stub));
    const result = spawnSync('systemd-analyze', ['verify', file], { encoding: 'utf8' });
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
  });

  it('runs as a dedicated user on a read-only system with only the data dir writable', () => {
    for (const line of [
      'User=agentinfra',
      'ProtectSystem=strict',
      'ReadWritePaths=/var/lib/agentinfra',
      'NoNewPrivileges=true',
      'ExecStart=/usr/local/bin/agentinfra serve',
    ]) {
      expect(unit.split('\n')).toContain(line);
    }
  });

  // Background threads call os.setPriority (setpriority(2), in @resources): filtered, it would kill the server with SIGSYS.
  it("lets the server lower its threads' priority, and turns any other filtered call into an EPERM error", () => {
    const lines = unit.split('\n');
    expect(lines).toContain('SystemCallFilter=~@privileged @resources');
    expect(lines.indexOf('SystemCallFilter=setpriority')).toBeGreaterThan(lines.indexOf('SystemCallFilter=~@privileged @resources'));
    expect(lines).toContain('SystemCallErrorNumber=EPERM');
  });

  it('ships a PostgreSQL + Redis + S3 environment and a Prometheus scrape config with the metrics token', () => {
    const env = readFileSync(join(folder, 'agentinfra.env.example'), 'utf8');
    for (const name of ['AGENTINFRA_DATABASE_URL', 'AGENTINFRA_REDIS_URL', 'AGENTINFRA_S3_BUCKET', 'AGENTINFRA_METRICS_TOKEN']) {
      expect(env).toMatch(new RegExp(`^${name}=`, 'm'));
    }
    // SMTP binds AGENTINFRA_SMTP_HOST (default 127.0.0.1), not AGENTINFRA_HOST: port 25 would be unreachable from the MX.
    expect(env).toMatch(/^AGENTINFRA_HOST=0\.0\.0\.0$/m);
    expect(env).toMatch(/^AGENTINFRA_SMTP_HOST=0\.0\.0\.0$/m);
    const prometheus = readFileSync(join(folder, 'prometheus.yml'), 'utf8');
    expect(prometheus).toContain('metrics_path: /metrics');
    expect(prometheus).toContain('type: Bearer');
  });
});
