import type { SqlDatabase } from '@agentinfra/core';
import { startTestKernel, type TestKernel } from '@agentinfra/core/testing';
import { sqlDatabases } from '@agentinfra/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { identityModule } from './module.js';

describe.each(sqlDatabases())('agent-identity per-agent quotas on $name', ({ create }) => {
  let server: TestKernel;
  let cleanup: () => Promise<void>;
  let db: SqlDatabase;
  const keys: Record<string, string> = {};
  let now = Date.now();
  const clock = { now: () => now };
  const inOneDay = () => new Date(now + 86_400_000).toISOString();

  beforeAll(async () => {
    const fixture = await create();
    cleanup = fixture.cleanup;
    db = fixture.db;
    server = await startTestKernel({
      modules: [identityModule],
      adapters: { sql: db, clock },
    });
    const bridge = { credential: server.bridgeKey };
    for (const key of ['identity_max_secrets_per_agent', 'identity_max_live_delegations_per_agent']) {
      expect((await server.call('agent-identity/settings/set', { key, value: 3 }, bridge)).status).toBe(200);
    }
    for (const agent of ['quinn', 'rosa', 'sam', 'tess', 'uma', 'vic']) {
      expect((await server.call('agent-identity/agents/create', { agent_id: agent, display_name: agent }, bridge)).status).toBe(200);
      keys[agent] = (await server.call('agent-identity/device/issue', { agent_id: agent, label: 'main' }, bridge)).body.device_key;
    }
  });

  afterAll(async () => {
    await server?.stop();
    await cleanup?.();
  });

  const putSecret = (agent: string, key: string, credential = keys[agent]!) =>
    server.call('agent-identity/secrets/put', { agent_id: agent, key, value: 'v' }, { credential });
  const delegate = (from: string, credential: string, expiresAt = inOneDay()) =>
    server.call(
      'agent-identity/delegate',
      { from_agent: from, to_agent: 'uma', scope: ['identity.delegate', 'secrets.read'], expires_at: expiresAt },
      { credential },
    );
  const storedRows = async (table: string, column: string, agent: string) =>
    Number(
      (
        (await db
          .knex(table)
          .where({ [column]: agent })
          .count({ n: '*' })
          .first()) as { n: number | string }
      ).n,
    );

  it('refuses a new secret key past setting identity_max_secrets_per_agent with 409, but still replaces a stored one', async () => {
    for (const key of ['a', 'b', 'c']) expect((await putSecret('quinn', key)).status).toBe(200);
    const refused = await putSecret('quinn', 'd');
    expect(refused.status).toBe(409);
    expect(refused.body.error).toEqual({
      code: 'conflict',
      message: 'Agent "quinn" holds 3 secrets, its quota (setting identity_max_secrets_per_agent); delete one with /secrets/delete first.',
      details: { quota: 3, used: 3 },
    });
    expect(await storedRows('identity_secrets', 'agent_id', 'quinn')).toBe(3);
    expect((await putSecret('quinn', 'b')).status).toBe(200);
    expect((await putSecret('rosa', 'a')).status).toBe(200);
    expect((await server.call('agent-identity/secrets/delete', { agent_id: 'quinn', key: 'a' }, { credential: keys.quinn })).status).toBe(
      200,
    );
    expect((await putSecret('quinn', 'd')).status).toBe(200);
  });

  it('lets concurrent puts of new keys store no more than the quota', async () => {
    const answers = await Promise.all(['k1', 'k2', 'k3', 'k4', 'k5', 'k6'].map((key) => putSecret('sam', key)));
    expect(answers.map((answer) => answer.status).sort()).toEqual([200, 200, 200, 409, 409, 409]);
    expect(await storedRows('identity_secrets', 'agent_id', 'sam')).toBe(3);
  });

  it('refuses a delegation past setting identity_max_live_delegations_per_agent with 409, also one made with a token, until one ends', async () => {
    const first = await delegate('rosa', keys.rosa!);
    expect(first.status).toBe(200);
    expect((await delegate('rosa', first.body.token)).status).toBe(200);
    expect((await delegate('rosa', keys.rosa!)).status).toBe(200);
    for (const credential of [keys.rosa!, first.body.token as string]) {
      const refused = await delegate('rosa', credential);
      expect(refused.status).toBe(409);
      expect(refused.body.error).toEqual({
        code: 'conflict',
        message:
          'Agent "rosa" holds 3 live delegations, its quota (setting identity_max_live_delegations_per_agent); revoke one with /delegate/revoke first, or wait for one to expire.',
        details: { quota: 3, used: 3 },
      });
    }
    expect(await storedRows('identity_delegations', 'from_agent', 'rosa')).toBe(3);
    expect((await delegate('quinn', keys.quinn!)).status).toBe(200);
    const revoked = await server.call(
      'agent-identity/delegate/revoke',
      { delegation_id: first.body.delegation_id },
      { credential: keys.rosa },
    );
    expect(revoked.status).toBe(200);
    // Revoking the first ended the one made with its token too: two places are free again.
    expect((await delegate('rosa', keys.rosa!)).status).toBe(200);
    expect((await delegate('rosa', keys.rosa!)).status).toBe(200);
    expect((await delegate('rosa', keys.rosa!)).status).toBe(409);
  });

  it('counts only delegations that have not expired', async () => {
    const inOneMinute = new Date(now + 60_000).toISOString();
    for (let index = 0; index < 3; index += 1) expect((await delegate('tess', keys.tess!, inOneMinute)).status).toBe(200);
    now += 59_999;
    expect((await delegate('tess', keys.tess!)).status).toBe(409);
    now += 1;
    expect((await delegate('tess', keys.tess!)).status).toBe(200);
  });

  it('keeps at most the quota of ended delegations per agent: creating one deletes the oldest ended beyond it', async () => {
    const revoke = (delegationId: string) =>
      server.call('agent-identity/delegate/revoke', { delegation_id: delegationId }, { credential: keys.vic });
    const live = await delegate('vic', keys.vic!);
    const expiring = await delegate('vic', keys.vic!, new Date(now + 60_000).toISOString());
    now += 120_000;
    const ended: Array<{ id: string; revokedAt: string }> = [];
    for (let round = 0; round < 12; round += 1) {
      now += 1_000;
      const made = await delegate('vic', keys.vic!);
      expect(made.status).toBe(200);
      const revoked = await revoke(made.body.delegation_id);
      expect(revoked.status).toBe(200);
      ended.push({ id: made.body.delegation_id, revokedAt: revoked.body.revoked_at });
    }
    // The live one, the 3 newest ended when the last was made, and the last: never more than twice the quota.
    const kept = [live.body.delegation_id, ...ended.slice(-4).map((row) => row.id)].sort();
    const stored = (await db.knex('identity_delegations').pluck('delegation_id').where({ from_agent: 'vic' })) as string[];
    expect(stored.sort()).toEqual(kept);
    expect(stored).not.toContain(expiring.body.delegation_id);
    // A kept one still answers with its first revocation; a pruned one is gone, as after the 7-day sweep.
    const again = await revoke(ended[8]!.id);
    expect(again.body).toEqual({ delegation_id: ended[8]!.id, revoked_at: ended[8]!.revokedAt });
    expect((await revoke(ended[0]!.id)).status).toBe(404);
  });

  it('lets concurrent delegations store no more than the quota', async () => {
    const answers = await Promise.all(Array.from({ length: 6 }, () => delegate('sam', keys.sam!)));
    expect(answers.map((answer) => answer.status).sort()).toEqual([200, 200, 200, 409, 409, 409]);
    expect(await storedRows('identity_delegations', 'from_agent', 'sam')).toBe(3);
  });
});

describe.each(sqlDatabases())('agent-identity quota settings on $name', ({ create }) => {
  it('default to 500 secrets and 10,000 live delegations per agent, and refuse values that are not whole numbers from 1 to 1,000,000', async () => {
    const { db, cleanup } = await create();
    const server = await startTestKernel({ modules: [identityModule], adapters: { sql: db } });
    try {
      const bridge = { credential: server.bridgeKey };
      const listed = (await server.call('agent-identity/settings/list', {}, bridge)).body.settings as Array<{
        key: string;
        value: unknown;
      }>;
      const settingValue = (key: string) => listed.find((setting) => setting.key === key)?.value;
      expect([settingValue('identity_max_secrets_per_agent'), settingValue('identity_max_live_delegations_per_agent')]).toEqual([
        500, 10_000,
      ]);
      for (const key of ['identity_max_secrets_per_agent', 'identity_max_live_delegations_per_agent']) {
        for (const value of [0, 1_000_001, 2.5]) {
          expect((await server.call('agent-identity/settings/set', { key, value }, bridge)).status).toBe(400);
        }
      }
    } finally {
      await server.stop();
      await cleanup();
    }
  });
});
