import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { freshKeys, post, runCli, startServe } from './serve-process.test-support.js';

// Walkthrough: a second `wg-config` with nothing changed printed nothing at all and exited 0.
describe('agentinfra wg-config run again with nothing changed', () => {
  it('says the file is unchanged', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'agentinfra-wg-unchanged-'));
    const keys = freshKeys();
    const env = { ...keys, AGENTINFRA_DATA_DIR: join(dir, 'data'), AGENTINFRA_ACME_HTTP_PORT: '0', AGENTINFRA_SMTP_PORT: '0' };
    const server = await startServe(['--port', '0'], { cwd: dir, env });
    try {
      await post(server.url, 'agent-identity/agents/create', { agent_id: 'host1', display_name: 'Host 1' }, keys.AGENTINFRA_BRIDGE_KEY);
      const { device_key } = (
        await post(server.url, 'agent-identity/device/issue', { agent_id: 'host1', label: 'wg' }, keys.AGENTINFRA_BRIDGE_KEY)
      ).body;
      const out = join(dir, 'agent0.conf');
      const args = ['wg-config', '--url', server.url, '--key', device_key, '--private-key-file', join(dir, 'wg.key'), '--out', out];
      const first = await runCli([...args, '--endpoint', '203.0.113.7:51820'], { cwd: dir });
      expect(first.code, first.stderr).toBe(0);
      expect(first.stdout).toContain(`wrote ${out} (0 peers)`);
      const second = await runCli(args, { cwd: dir });
      expect(second.code, second.stderr).toBe(0);
      expect(second.stdout).toBe(`${out} unchanged (0 peers)\n`);
    } finally {
      expect(await server.stop()).toBe(0);
    }
  }, 60_000);
});
