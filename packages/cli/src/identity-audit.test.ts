import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { createSqliteDatabase } from '@agentinfra/adapter-sqlite';
import type { AuditRow } from '@agentinfra/core';
import { describe, expect, it } from 'vitest';
import { runCliInProcess } from './serve-process.test-support.js';

// Operator walkthrough: `agentinfra agents create` and `agentinfra issue-device` left no audit event,
// while docs/operations.md lists agents created and device keys issued among the recorded events. The CLI runs in this
// process (runCliInProcess), whose user is the one a process of its own would run as.
describe('agentinfra agents create and issue-device in the audit log', () => {
  const dir = mkdtempSync(join(tmpdir(), 'agentinfra-identity-audit-'));
  const env = { AGENTINFRA_CONFIG: join(dir, 'agentinfra.config.json'), AGENTINFRA_DATA_DIR: join(dir, 'data'), AGENTINFRA_SMTP_PORT: '0' };

  it('records agent.create and device.issue with the CLI as the actor, and never the key', async () => {
    expect((await runCliInProcess(['init'], { cwd: dir, env })).code).toBe(0);
    expect((await runCliInProcess(['agents', 'create', '--agent', 'bob', '--name', 'Bob'], { cwd: dir, env })).code).toBe(0);
    const issued = await runCliInProcess(['issue-device', '--agent', 'bob', '--label', 'laptop', '--json'], { cwd: dir, env });
    expect(issued.code).toBe(0);
    const device = JSON.parse(issued.stdout) as { device_id: string; device_key: string };
    expect((await runCliInProcess(['issue-device', '--agent', 'nobody', '--label', 'x'], { cwd: dir, env })).code).toBe(1);

    const sql = createSqliteDatabase({ filename: join(env.AGENTINFRA_DATA_DIR, 'agentinfra.db') });
    const rows = (await sql.knex('core_audit').orderBy('seq')) as AuditRow[];
    await sql.close();
    const actor = { actor_kind: 'system', actor_id: `cli:${userInfo().username}`, actor_agent: null };
    expect(rows).toEqual([
      expect.objectContaining({ ...actor, action: 'agent.create', outcome: 'success', target: 'agent:bob', agent_id: 'bob' }),
      expect.objectContaining({
        ...actor,
        action: 'device.issue',
        outcome: 'success',
        target: `agent:bob/device:${device.device_id}`,
        agent_id: 'bob',
      }),
      expect.objectContaining({ ...actor, action: 'device.issue', outcome: 'failed', target: 'agent:nobody', detail: '{"status":404}' }),
    ]);
    expect(JSON.stringify(rows)).not.toContain(device.device_key);
    expect(JSON.stringify(rows)).not.toContain(JSON.parse(readFileSync(env.AGENTINFRA_CONFIG, 'utf8')).bridgeKey);
    expect((await runCliInProcess(['audit', 'verify'], { cwd: dir, env })).stdout).toMatch(/^audit chain ok: 3 events checked/);
  }, 60_000);
});
