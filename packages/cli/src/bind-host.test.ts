import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isBindHost } from '@agentinfra/core';
import { describe, expect, it } from 'vitest';
import { freshKeys, runCli } from './serve-process.test-support.js';

describe('serve --host', () => {
  it.each([
    '127.0.0.1',
    '0.0.0.0',
    '::',
    '::1',
    'fe80::1%eth0',
    'localhost',
    'api.example.com',
    'api.example.com.',
    'agentinfra_db',
    'a-1',
  ])('takes %s', (host) => expect(isBindHost(host)).toBe(true));

  it.each(['no such host!', '', '[::1]', 'http://localhost', 'host:8787', '-lead.example', 'a..b', `${'a'.repeat(64)}.example`])(
    'refuses %j',
    (host) => expect(isBindHost(host)).toBe(false),
  );

  // Review: AGENTINFRA_HOST was not checked at all; the server started its modules, then stopped on ENOTFOUND.
  it('refuses the same from AGENTINFRA_HOST, naming the variable (exit 2)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'agentinfra-bind-host-'));
    const env = { ...freshKeys(), AGENTINFRA_DATA_DIR: join(dir, 'data'), AGENTINFRA_HOST: 'no such host!' };
    const result = await runCli(['serve', '--port', '0'], { cwd: dir, env, timeoutMs: 30_000 });
    expect(result.stderr).toContain('host from AGENTINFRA_HOST: must be an IP address (127.0.0.1, 0.0.0.0, ::) or a host name (localhost)');
    expect(result.stderr).not.toContain('getaddrinfo');
    expect(result.code).toBe(2);
  }, 30_000);

  // Review: `serve --host 'no such host!'` migrated, then stopped on `getaddrinfo ENOTFOUND` with exit 1.
  it('refuses a host that is no address or host name before anything starts, exit 2 as for --port', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'agentinfra-bind-host-'));
    const env = { ...freshKeys(), AGENTINFRA_DATA_DIR: join(dir, 'data'), AGENTINFRA_ACME_HTTP_PORT: '0', AGENTINFRA_SMTP_PORT: '0' };
    const result = await runCli(['serve', '--port', '0', '--host', 'no such host!'], { cwd: dir, env, timeoutMs: 30_000 });
    expect(result.stderr).toBe(
      'agentinfra: --host "no such host!": must be an IP address (127.0.0.1, 0.0.0.0, ::) or a host name (localhost).\n',
    );
    expect(result.stderr).not.toContain('getaddrinfo');
    expect(result.code).toBe(2);
  }, 30_000);
});
