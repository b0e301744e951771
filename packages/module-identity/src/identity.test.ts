import { newCredential, newMasterKey, type SqlDatabase } from '@agentinfra/core';
import { keepOpen, startTestKernel, type TestKernel } from '@agentinfra/core/testing';
import { sqlDatabases } from '@agentinfra/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { identityModule } from './module.js';

const future = (days: number) => new Date(Date.now() + days * 86_400_000).toISOString();

describe.each(sqlDatabases())('agent-identity over HTTP on $name', ({ create }) => {
  let server: TestKernel;
  let cleanup: () => Promise<void>;
  let db: SqlDatabase;
  let aliceKey: string;
  let aliceDevice: string;
  let bobKey: string;

  beforeAll(async () => {
    const fixture = await create();
    cleanup = fixture.cleanup;
    db = fixture.db;
    server = await startTestKernel({ modules: [identityModule], adapters: { sql: db } });
    const bridge = { credential: server.bridgeKey };
    expect((await server.call('agent-identity/agents/create', { agent_id: 'alice', display_name: 'Alice' }, bridge)).status).toBe(200);
    expect((await server.call('agent-identity/agents/create', { agent_id: 'bob', display_name: 'Bob' }, bridge)).status).toBe(200);
    const issued = await server.call('agent-identity/device/issue', { agent_id: 'alice', label: 'laptop' }, bridge);
    aliceKey = issued.body.device_key;
    aliceDevice = issued.body.device_id;
    bobKey = (await server.call('agent-identity/device/issue', { agent_id: 'bob', label: 'ci' }, bridge)).body.device_key;
  });

  afterAll(async () => {
    await server?.stop();
    await cleanup?.();
  });

  it('creates agents with created_at and refuses a taken id with 409', async () => {
    const created = await server.call(
      'agent-identity/agents/create',
      { agent_id: 'carol', display_name: 'Carol' },
      { credential: server.bridgeKey },
    );
    expect(created.body).toEqual({ agent_id: 'carol', created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/) });
    const again = await server.call(
      'agent-identity/agents/create',
      { agent_id: 'carol', display_name: 'Carol' },
      { credential: server.bridgeKey },
    );
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe('conflict');
  });

  it('issues device keys once, with the contract forms and a 90-day default expiry', async () => {
    const issued = await server.call(
      'agent-identity/device/issue',
      { agent_id: 'alice', label: 'phone' },
      { credential: server.bridgeKey },
    );
    expect(issued.status).toBe(200);
    expect(issued.body.device_key).toMatch(/^dk_[A-Za-z0-9_-]{43}$/);
    expect(issued.body.device_id).toMatch(/^dev_[A-Za-z0-9_-]+$/);
    const days = (Date.parse(issued.body.expires_at) - Date.now()) / 86_400_000;
    expect(days).toBeGreaterThan(89.9);
    expect(days).toBeLessThanOrEqual(90);
    const missing = await server.call('agent-identity/device/issue', { agent_id: 'nobody', label: 'x' }, { credential: server.bridgeKey });
    expect(missing.status).toBe(404);
    const byDevice = await server.call('agent-identity/device/issue', { agent_id: 'alice', label: 'x' }, { credential: aliceKey });
    expect(byDevice.status).toBe(403);
  });

  it('revokes a device with its own key, and the key stops working at once', async () => {
    const issued = await server.call('agent-identity/device/issue', { agent_id: 'alice', label: 'temp' }, { credential: server.bridgeKey });
    const key = issued.body.device_key;
    expect((await server.call('agent-identity/secrets/put', { agent_id: 'alice', key: 'k', value: 'v' }, { credential: key })).status).toBe(
      200,
    );
    const otherDevice = await server.call('agent-identity/device/revoke', { device_id: aliceDevice }, { credential: key });
    expect(otherDevice.status).toBe(403);
    expect(otherDevice.body.error.message).toBe('A device key can revoke only its own device; use the bridge key for others.');
    const revoked = await server.call('agent-identity/device/revoke', { device_id: issued.body.device_id }, { credential: key });
    expect(revoked.status).toBe(200);
    expect(revoked.body.device_id).toBe(issued.body.device_id);
    const after = await server.call('agent-identity/secrets/get', { agent_id: 'alice', key: 'k' }, { credential: key });
    expect(after.status).toBe(401);
    const twice = await server.call('agent-identity/device/revoke', { device_id: issued.body.device_id }, { credential: server.bridgeKey });
    expect(twice.body.revoked_at).toBe(revoked.body.revoked_at);
    const unknown = await server.call('agent-identity/device/revoke', { device_id: 'dev_nope' }, { credential: server.bridgeKey });
    expect(unknown.status).toBe(404);
  });

  // Review: each of several revocations at once answered its own time; only the first one's is stored.
  it('answers concurrent revocations of one device or delegation with the one stored revoked_at', async () => {
    const bridge = { credential: server.bridgeKey };
    const device = (await server.call('agent-identity/device/issue', { agent_id: 'alice', label: 'raced' }, bridge)).body;
    const deviceAnswers = await Promise.all(
      Array.from({ length: 8 }, () => server.call('agent-identity/device/revoke', { device_id: device.device_id }, bridge)),
    );
    const delegation = (
      await server.call(
        'agent-identity/delegate',
        { from_agent: 'alice', to_agent: 'bob', scope: ['secrets.read'], expires_at: future(1) },
        { credential: aliceKey },
      )
    ).body;
    const delegationAnswers = await Promise.all(
      Array.from({ length: 6 }, () =>
        server.call('agent-identity/delegate/revoke', { delegation_id: delegation.delegation_id }, { credential: aliceKey }),
      ),
    );
    for (const answers of [deviceAnswers, delegationAnswers]) {
      expect(answers.map((answer) => answer.status)).toEqual(answers.map(() => 200));
      expect(new Set(answers.map((answer) => answer.body.revoked_at)).size).toBe(1);
    }
    const again = await server.call('agent-identity/device/revoke', { device_id: device.device_id }, bridge);
    expect(again.body.revoked_at).toBe(deviceAnswers[0]?.body.revoked_at);
  });

  it('keeps a delegation made by a delegation token within its parent: no later expiry, and revoked with it', async () => {
    const inOneHour = new Date(Date.now() + 3_600_000).toISOString();
    const parent = await server.call(
      'agent-identity/delegate',
      { from_agent: 'alice', to_agent: 'bob', scope: ['identity.delegate'], expires_at: inOneHour },
      { credential: aliceKey },
    );
    expect(parent.status).toBe(200);
    const asParent = { credential: parent.body.token as string };
    const outliving = await server.call(
      'agent-identity/delegate',
      { from_agent: 'alice', to_agent: 'bob', scope: ['identity.delegate'], expires_at: future(300) },
      asParent,
    );
    expect(outliving.status).toBe(400);
    expect(outliving.body.error.message).toMatch(/must not be later than the delegating token's own expiry/);
    const inHalfAnHour = new Date(Date.now() + 1_800_000).toISOString();
    const child = await server.call(
      'agent-identity/delegate',
      { from_agent: 'alice', to_agent: 'bob', scope: ['identity.delegate'], expires_at: inHalfAnHour },
      asParent,
    );
    expect(child.status).toBe(200);
    const asChild = { credential: child.body.token as string };
    const grandchild = await server.call(
      'agent-identity/delegate',
      { from_agent: 'alice', to_agent: 'bob', scope: ['identity.delegate'], expires_at: inHalfAnHour },
      asChild,
    );
    expect(grandchild.status).toBe(200);
    const revoked = await server.call(
      'agent-identity/delegate/revoke',
      { delegation_id: parent.body.delegation_id },
      { credential: aliceKey },
    );
    expect(revoked.status).toBe(200);
    for (const token of [parent.body.token, child.body.token, grandchild.body.token] as string[]) {
      const after = await server.call(
        'agent-identity/delegate',
        { from_agent: 'alice', to_agent: 'bob', scope: ['identity.delegate'], expires_at: inHalfAnHour },
        { credential: token },
      );
      expect(after.status).toBe(401);
    }
  });

  // Security review: a token holding identity.delegate could revoke any delegation of its agent, a sibling holding
  // permissions it lacks or the parent it came from included.
  it('lets a token with identity.delegate revoke only itself and the delegations made down its own chain', async () => {
    const expiresAt = future(1);
    const delegate = (scope: string[], credential: string) =>
      server.call('agent-identity/delegate', { from_agent: 'alice', to_agent: 'bob', scope, expires_at: expiresAt }, { credential });
    const revoke = (delegationId: string, credential: string) =>
      server.call('agent-identity/delegate/revoke', { delegation_id: delegationId }, { credential });
    const narrow = await delegate(['identity.delegate'], aliceKey);
    const sibling = await delegate(['secrets.read', 'identity.delegate'], aliceKey);
    const child = await delegate(['identity.delegate'], narrow.body.token);
    const grandchild = await delegate(['identity.delegate'], child.body.token);
    const refused = await revoke(sibling.body.delegation_id, narrow.body.token);
    expect(refused.status).toBe(404);
    expect(refused.body.error.code).toBe('not_found');
    expect((await revoke(narrow.body.delegation_id, child.body.token)).status).toBe(404);
    expect((await revoke(grandchild.body.delegation_id, narrow.body.token)).status).toBe(200);
    expect((await revoke(child.body.delegation_id, child.body.token)).status).toBe(200);
    expect((await revoke(sibling.body.delegation_id, aliceKey)).status).toBe(200);
    expect((await revoke(narrow.body.delegation_id, narrow.body.token)).status).toBe(200);
  });

  it('refuses a child of a delegation revoked by another replica while this one still has its token cached', async () => {
    const inOneHour = new Date(Date.now() + 3_600_000).toISOString();
    const parent = await server.call(
      'agent-identity/delegate',
      { from_agent: 'alice', to_agent: 'bob', scope: ['identity.delegate'], expires_at: inOneHour },
      { credential: aliceKey },
    );
    const asParent = { credential: parent.body.token as string };
    const child = { from_agent: 'alice', to_agent: 'bob', scope: ['identity.delegate'], expires_at: inOneHour };
    expect((await server.call('agent-identity/delegate', child, asParent)).status).toBe(200);
    // What another replica's /delegate/revoke does: the row is revoked, this process's credential cache is not told.
    await db.knex('identity_delegations').where({ delegation_id: parent.body.delegation_id }).update({ revoked_at: Date.now() });
    const refused = await server.call('agent-identity/delegate', child, asParent);
    expect(refused.status).toBe(401);
    expect(refused.body.error.code).toBe('unauthenticated');
  });

  // Review: the revocation walk put a whole level of the chain in one statement: past the database's parameter limit
  // (SQLite 32,766, PostgreSQL 65,535) it failed, and a token holder could make its delegation unrevocable that way.
  it('revokes a delegation with more direct children than one SQL statement can name', async () => {
    // An agent of its own: its 66,000 children are past the default quota of live delegations, so if
    // the revocation failed, alice's later /delegate calls would get 409 and hide this failure among theirs.
    const bridge = { credential: server.bridgeKey };
    await server.call('agent-identity/agents/create', { agent_id: 'fanny', display_name: 'Fanny' }, bridge);
    const fannyKey = (await server.call('agent-identity/device/issue', { agent_id: 'fanny', label: 'fan-out' }, bridge)).body.device_key;
    const parent = await server.call(
      'agent-identity/delegate',
      { from_agent: 'fanny', to_agent: 'bob', scope: ['identity.delegate'], expires_at: future(1) },
      { credential: fannyKey },
    );
    const parentId = parent.body.delegation_id as string;
    const now = Date.now();
    const children = Array.from({ length: 66_000 }, (_, i) => ({
      delegation_id: `dlg_fanout_${i}`,
      token_hash: `fanout-${i}`,
      from_agent: 'fanny',
      to_agent: 'bob',
      scope: '["identity.delegate"]',
      created_at: now,
      expires_at: now + 3_600_000,
      revoked_at: null,
      parent_delegation_id: parentId,
    }));
    await db.knex.batchInsert('identity_delegations', children, 400);
    const revoked = await server.call('agent-identity/delegate/revoke', { delegation_id: parentId }, { credential: fannyKey });
    expect(revoked.status, JSON.stringify(revoked.body)).toBe(200);
    const live = await db.knex('identity_delegations').where({ parent_delegation_id: parentId }).whereNull('revoked_at').count({ n: '*' });
    expect(Number(live[0]?.n)).toBe(0);
    expect((await server.call('agent-identity/secrets/list', { agent_id: 'fanny' }, { credential: parent.body.token })).status).toBe(401);
  }, 60_000);

  // Review: the window was per (from_agent, to_agent), so a holder of a token with identity.delegate opened a fresh
  // one by delegating on to another agent (or to from_agent itself) and using that token.
  it('counts tokens made with a token against the window of the chain it came from', async () => {
    const limited = await startTestKernel({
      modules: [identityModule],
      adapters: { sql: keepOpen(db) },
      config: { http: { rateLimitPerMinute: 6 } },
    });
    try {
      const key = (
        await limited.call('agent-identity/device/issue', { agent_id: 'alice', label: 'rate' }, { credential: limited.bridgeKey })
      ).body.device_key as string;
      const expiresAt = future(1);
      const delegate = (to: string, credential: string) =>
        limited.call(
          'agent-identity/delegate',
          { from_agent: 'alice', to_agent: to, scope: ['identity.delegate', 'secrets.read'], expires_at: expiresAt },
          { credential },
        );
      await limited.call(
        'agent-identity/agents/create',
        { agent_id: 'rate-target', display_name: 'Rate target' },
        { credential: limited.bridgeKey },
      );
      const parent = (await delegate('bob', key)).body.token as string;
      const tokens = [parent];
      for (const to of ['rate-target', 'alice']) {
        const made = await delegate(to, parent);
        expect(made.status, JSON.stringify(made.body)).toBe(200);
        tokens.push(made.body.token);
      }
      const statuses: number[] = [];
      for (let i = 0; i < 6; i += 1) {
        for (const token of tokens) {
          statuses.push((await limited.call('agent-identity/secrets/list', { agent_id: 'alice' }, { credential: token })).status);
        }
      }
      // Two delegations were already counted; the chain has 4 requests of its window left, whichever token sends them.
      expect(statuses.filter((status) => status === 200)).toHaveLength(4);
      expect(statuses.filter((status) => status === 429)).toHaveLength(14);
    } finally {
      await limited.stop();
    }
  });

  it('refuses device revocation by a delegation token with a message about delegation tokens, and says so in the OpenAPI document', async () => {
    const made = await server.call(
      'agent-identity/delegate',
      { from_agent: 'alice', to_agent: 'bob', scope: ['identity.delegate'], expires_at: future(1) },
      { credential: aliceKey },
    );
    for (const deviceId of [aliceDevice, 'dev_nope']) {
      const refused = await server.call('agent-identity/device/revoke', { device_id: deviceId }, { credential: made.body.token });
      expect(refused.status).toBe(403);
      expect(refused.body.error).toEqual({
        code: 'forbidden',
        message: 'This operation takes a device key or the bridge key; delegation tokens cannot perform it.',
      });
    }
    expect((await server.call('agent-identity/secrets/list', { agent_id: 'alice' }, { credential: aliceKey })).status).toBe(200);
    const doc = (await (await fetch(`${server.url}/openapi.json`)).json()) as {
      paths: Record<string, { post: { security: unknown; description: string } }>;
    };
    const revoke = doc.paths['/functions/v1/agent-identity/device/revoke']?.post;
    expect(revoke?.security).toEqual([{ deviceKey: [] }, { bridgeKey: [] }]);
    expect(revoke?.description).toContain('Credential: a device key or the bridge key (not a delegation token).');
  });

  it('stores secrets encrypted: the database holds no plaintext and get returns it', async () => {
    const value = `s3cret-${newCredential('g_')}`;
    const put = await server.call(
      'agent-identity/secrets/put',
      { agent_id: 'alice', key: 'openai/api_key', value },
      { credential: aliceKey },
    );
    expect(put.status).toBe(200);
    expect(put.body.key).toBe('openai/api_key');
    const rows = await db.knex('identity_secrets').select('sealed');
    expect(JSON.stringify(rows)).not.toContain(value);
    const got = await server.call('agent-identity/secrets/get', { agent_id: 'alice', key: 'openai/api_key' }, { credential: aliceKey });
    expect(got.body).toEqual({ value });
    const list = await server.call('agent-identity/secrets/list', { agent_id: 'alice' }, { credential: aliceKey });
    expect(JSON.stringify(list.body)).not.toContain(value);
    expect(list.body.secrets.map((s: { key: string }) => s.key)).toContain('openai/api_key');
    const bob = await server.call('agent-identity/secrets/get', { agent_id: 'alice', key: 'openai/api_key' }, { credential: bobKey });
    expect(bob.status).toBe(403);
    const absent = await server.call('agent-identity/secrets/get', { agent_id: 'alice', key: 'nope' }, { credential: aliceKey });
    expect(absent.status).toBe(404);
    const deleted = await server.call(
      'agent-identity/secrets/delete',
      { agent_id: 'alice', key: 'openai/api_key' },
      { credential: aliceKey },
    );
    expect(deleted.body).toEqual({ key: 'openai/api_key', deleted: true });
  });

  it('limits a secret value to 64 KiB of UTF-8 bytes, not characters', async () => {
    const put = (value: string) =>
      server.call('agent-identity/secrets/put', { agent_id: 'alice', key: 'big', value }, { credential: aliceKey });
    expect((await put('a'.repeat(65_536))).status).toBe(200);
    expect((await put(`${'€'.repeat(21_845)}a`)).status).toBe(200);
    for (const value of ['€'.repeat(65_536), `${'€'.repeat(21_845)}ab`, 'a'.repeat(65_537)]) {
      const refused = await put(value);
      expect(refused.status).toBe(400);
      expect(refused.body.error.code).toBe('invalid_request');
      expect(refused.body.error.details.fields).toEqual([{ path: 'value', message: 'must be at most 65536 bytes (64 KiB) of UTF-8' }]);
    }
  });

  it('delegates scoped, expiring tokens that act as from_agent for their permissions only', async () => {
    await server.call('agent-identity/secrets/put', { agent_id: 'alice', key: 'shared', value: 'v1' }, { credential: aliceKey });
    const made = await server.call(
      'agent-identity/delegate',
      { from_agent: 'alice', to_agent: 'bob', scope: ['secrets.read'], expires_at: future(1) },
      { credential: aliceKey },
    );
    expect(made.status).toBe(200);
    expect(made.body.delegation_id).toMatch(/^dlg_/);
    expect(made.body.token).toMatch(/^dt_[A-Za-z0-9_-]{43}$/);
    const token = made.body.token;
    const read = await server.call('agent-identity/secrets/get', { agent_id: 'alice', key: 'shared' }, { credential: token });
    expect(read.body).toEqual({ value: 'v1' });
    const write = await server.call('agent-identity/secrets/put', { agent_id: 'alice', key: 'shared', value: 'x' }, { credential: token });
    expect(write.status).toBe(403);
    const escalate = await server.call(
      'agent-identity/delegate',
      { from_agent: 'alice', to_agent: 'bob', scope: ['secrets.read'], expires_at: future(1) },
      { credential: token },
    );
    expect(escalate.status).toBe(403);
    const revoked = await server.call(
      'agent-identity/delegate/revoke',
      { delegation_id: made.body.delegation_id },
      { credential: aliceKey },
    );
    expect(revoked.status).toBe(200);
    const afterRevoke = await server.call('agent-identity/secrets/get', { agent_id: 'alice', key: 'shared' }, { credential: token });
    expect(afterRevoke.status).toBe(401);
  });

  it('validates delegations: unknown permission, past expiry, other agent, bridge key', async () => {
    const call = (body: object, credential = aliceKey) => server.call('agent-identity/delegate', body, { credential });
    const unknown = await call({ from_agent: 'alice', to_agent: 'bob', scope: ['memory.fly'], expires_at: future(1) });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.code).toBe('invalid_request');
    // #12: only permissions of loaded modules exist; memory is not loaded in this kernel.
    const unloaded = await call({ from_agent: 'alice', to_agent: 'bob', scope: ['memory.read'], expires_at: future(1) });
    expect(unloaded.status).toBe(400);
    expect(unloaded.body.error.details.allowed).toEqual(['identity.delegate', 'secrets.read', 'secrets.write']);
    const past = await call({
      from_agent: 'alice',
      to_agent: 'bob',
      scope: ['secrets.read'],
      expires_at: new Date(Date.now() - 1000).toISOString(),
    });
    expect(past.status).toBe(400);
    expect(past.body.error.details.fields[0].path).toBe('expires_at');
    const notIso = await call({ from_agent: 'alice', to_agent: 'bob', scope: ['secrets.read'], expires_at: 'tomorrow' });
    expect(notIso.status).toBe(400);
    const other = await call({ from_agent: 'alice', to_agent: 'bob', scope: ['secrets.read'], expires_at: future(1) }, bobKey);
    expect(other.status).toBe(403);
    const bridge = await call({ from_agent: 'alice', to_agent: 'bob', scope: ['secrets.read'], expires_at: future(1) }, server.bridgeKey);
    expect(bridge.status).toBe(403);
    const toNobody = await call({ from_agent: 'alice', to_agent: 'nobody', scope: ['secrets.read'], expires_at: future(1) });
    expect(toNobody.status).toBe(404);
  });

  it('lists settings with schemas and sets allowed keys within bounds', async () => {
    const list = await server.call('agent-identity/settings/list', {}, { credential: server.bridgeKey });
    expect(list.status).toBe(200);
    const retention = list.body.settings.find((s: { key: string }) => s.key === 'postbox_retention_days');
    expect(retention).toMatchObject({ value: 30, schema: { type: 'integer', minimum: 1, maximum: 3650 } });
    const set = await server.call(
      'agent-identity/settings/set',
      { key: 'postbox_retention_days', value: 7 },
      { credential: server.bridgeKey },
    );
    expect(set.body).toEqual({ key: 'postbox_retention_days', value: 7 });
    const after = await server.call('agent-identity/settings/list', {}, { credential: server.bridgeKey });
    expect(after.body.settings.find((s: { key: string }) => s.key === 'postbox_retention_days').value).toBe(7);
    for (const bad of [
      { key: 'postbox_retention_days', value: 0 },
      { key: 'postbox_retention_days', value: 1.5 },
      { key: 'postbox_retention_days', value: '30' },
      { key: 'postbox_quarantine_threshold', value: 2 },
      { key: 'not_a_setting', value: 1 },
    ]) {
      const response = await server.call('agent-identity/settings/set', bad, { credential: server.bridgeKey });
      expect(response.status, JSON.stringify(bad)).toBe(400);
    }
    expect((await server.call('agent-identity/settings/list', {}, { credential: aliceKey })).status).toBe(403);
  });

  it('keeps team membership', async () => {
    const added = await server.call('agent-identity/teams/add', { team: 'ops', agent_id: 'alice' }, { credential: server.bridgeKey });
    expect(added.body).toEqual({ team: 'ops', agent_id: 'alice', members: ['alice'] });
    await server.call('agent-identity/teams/add', { team: 'ops', agent_id: 'bob' }, { credential: server.bridgeKey });
    const removed = await server.call('agent-identity/teams/remove', { team: 'ops', agent_id: 'bob' }, { credential: server.bridgeKey });
    expect(removed.body.members).toEqual(['alice']);
    const badTeam = await server.call(
      'agent-identity/teams/add',
      { team: 'no spaces', agent_id: 'alice' },
      { credential: server.bridgeKey },
    );
    expect(badTeam.status).toBe(400);
  });

  it('answers bad input with 4xx in the contract shape and never 5xx', async () => {
    const bridge = { credential: server.bridgeKey };
    const cases: Array<[unknown, number]> = [
      ['{not json', 400],
      [[1, 2], 400],
      [{ agent_id: '', display_name: 'x' }, 400],
      [{ agent_id: 'a b', display_name: 'x' }, 400],
      [{ agent_id: 'x'.repeat(129), display_name: 'x' }, 400],
      [{ agent_id: 'ok', display_name: 'x', extra: true }, 400],
      [{ agent_id: 42, display_name: 'x' }, 400],
      ['null', 400],
    ];
    for (const [body, status] of cases) {
      const response = await server.call('agent-identity/agents/create', body, bridge);
      expect(response.status, JSON.stringify(body)).toBe(status);
      expect(response.body.error).toMatchObject({ code: 'invalid_request', message: expect.any(String) });
    }
    const unknownField = await server.call('agent-identity/agents/create', { agent_id: 'ok2', display_name: 'x', extra: 1 }, bridge);
    expect(JSON.stringify(unknownField.body.error.details)).toContain('extra');
    const big = await server.call('agent-identity/agents/create', { agent_id: 'big', display_name: 'x'.repeat(1_100_000) }, bridge);
    expect(big.status).toBe(413);
    expect(big.body.error.code).toBe('payload_too_large');
    const get = await server.call('agent-identity/agents/create', undefined, { ...bridge, method: 'GET' });
    expect(get.status).toBe(405);
    expect(get.headers.get('allow')).toBe('POST');
    const unknownPath = await server.call('agent-identity/nope', {}, bridge);
    expect(unknownPath.status).toBe(404);
    expect(unknownPath.body.error.code).toBe('not_found');
  });

  it('authenticates with Authorization: Bearer or apikey, and answers 401 otherwise', async () => {
    const body = { agent_id: 'alice', key: 'k2' };
    expect((await server.call('agent-identity/secrets/get', body)).status).toBe(401);
    const bad = await server.call('agent-identity/secrets/get', body, { credential: 'dk_unknown' });
    expect(bad.status).toBe(401);
    expect(bad.body.error.code).toBe('unauthenticated');
    expect(bad.headers.get('www-authenticate')).toBe('Bearer');
    const viaApikey = await server.call('agent-identity/secrets/get', body, { headers: { apikey: aliceKey } });
    expect(viaApikey.status).toBe(404);
    const malformed = await server.call('agent-identity/secrets/get', body, { headers: { authorization: 'Basic abc' } });
    expect(malformed.status).toBe(401);
  });
});

describe('agent-identity expiry and restart (SQLite file)', () => {
  it('refuses an expired device key, sweeps it later, and keeps data across a restart', async () => {
    const [sqlite] = sqlDatabases();
    const fixture = await sqlite!.create();
    let now = Date.now();
    const clock = { now: () => now };
    const config = { masterKey: newMasterKey() };
    const server = await startTestKernel({ modules: [identityModule], adapters: { sql: fixture.db, clock }, config });
    await server.call('agent-identity/agents/create', { agent_id: 'dora', display_name: 'Dora' }, { credential: server.bridgeKey });
    const issued = await server.call(
      'agent-identity/device/issue',
      { agent_id: 'dora', label: 'short', ttl_days: 1 },
      { credential: server.bridgeKey },
    );
    const key = issued.body.device_key;
    await server.call('agent-identity/secrets/put', { agent_id: 'dora', key: 'k', value: 'kept' }, { credential: key });
    now += 2 * 86_400_000;
    expect((await server.call('agent-identity/secrets/get', { agent_id: 'dora', key: 'k' }, { credential: key })).status).toBe(401);
    now += 8 * 86_400_000;
    const swept = await server.kernel.service<{ sweepExpired(): Promise<{ devices: number }> }>('agent-identity').sweepExpired();
    expect(swept.devices).toBe(1);
    const file = (fixture.db.describe().match(/\((.*)\)/) ?? [])[1]!;
    await server.stop();
    const { createSqliteDatabase } = await import('@agentinfra/adapter-sqlite');
    const reopened = createSqliteDatabase({ filename: file });
    const again = await startTestKernel({ modules: [identityModule], adapters: { sql: reopened, clock }, config });
    const fresh = await again.call('agent-identity/device/issue', { agent_id: 'dora', label: 'new' }, { credential: again.bridgeKey });
    expect(fresh.status).toBe(200);
    const got = await again.call('agent-identity/secrets/get', { agent_id: 'dora', key: 'k' }, { credential: fresh.body.device_key });
    expect(got.body).toEqual({ value: 'kept' });
    await again.stop();
    await fixture.cleanup();
  });
});

describe('agent-identity verified-credential cache (issue #2)', () => {
  it('ends a revoked key or delegation at once in this process, and elsewhere within identity.credentialCacheMs', async () => {
    const [sqlite] = sqlDatabases();
    const fixture = await sqlite!.create();
    let now = Date.now();
    const clock = { now: () => now };
    const config = { masterKey: newMasterKey() };
    const moduleConfigs = { 'agent-identity': { credentialCacheMs: 5_000 } };
    const here = await startTestKernel({ modules: [identityModule], adapters: { sql: fixture.db, clock }, config, moduleConfigs });
    const file = (fixture.db.describe().match(/\((.*)\)/) ?? [])[1]!;
    const { createSqliteDatabase } = await import('@agentinfra/adapter-sqlite');
    const replica = createSqliteDatabase({ filename: file });
    const there = await startTestKernel({ modules: [identityModule], adapters: { sql: replica, clock }, config, moduleConfigs });
    try {
      const bridge = { credential: here.bridgeKey };
      await here.call('agent-identity/agents/create', { agent_id: 'fay', display_name: 'Fay' }, bridge);
      await here.call('agent-identity/agents/create', { agent_id: 'gus', display_name: 'Gus' }, bridge);
      const issued = (await here.call('agent-identity/device/issue', { agent_id: 'fay', label: 'cached' }, bridge)).body;
      const put = (server: TestKernel, credential: string) =>
        server.call('agent-identity/secrets/put', { agent_id: 'fay', key: 'k', value: 'v' }, { credential });
      expect((await put(here, issued.device_key)).status).toBe(200);
      expect((await put(there, issued.device_key)).status).toBe(200);

      const revoked = await here.call('agent-identity/device/revoke', { device_id: issued.device_id }, bridge);
      expect(revoked.status).toBe(200);
      expect((await put(here, issued.device_key)).status).toBe(401);
      expect((await put(there, issued.device_key)).status).toBe(200);
      now += 5_000;
      expect((await put(there, issued.device_key)).status).toBe(401);

      const fresh = (await here.call('agent-identity/device/issue', { agent_id: 'fay', label: 'second' }, bridge)).body.device_key;
      const delegated = await here.call(
        'agent-identity/delegate',
        { from_agent: 'fay', to_agent: 'gus', scope: ['secrets.write'], expires_at: new Date(now + 60_000).toISOString() },
        { credential: fresh },
      );
      const token = delegated.body.token as string;
      expect((await put(here, token)).status).toBe(200);
      expect((await put(there, token)).status).toBe(200);
      const ended = await there.call(
        'agent-identity/delegate/revoke',
        { delegation_id: delegated.body.delegation_id },
        { credential: there.bridgeKey },
      );
      expect(ended.status).toBe(200);
      expect((await put(there, token)).status).toBe(401);
      now += 4_999;
      expect((await put(here, token)).status).toBe(200);
      now += 1;
      expect((await put(here, token)).status).toBe(401);
    } finally {
      await there.stop();
      await here.stop();
      await fixture.cleanup();
    }
  });

  it('honours a key’s expiry even while it is cached', async () => {
    const [sqlite] = sqlDatabases();
    const fixture = await sqlite!.create();
    let now = Date.now();
    const clock = { now: () => now };
    const moduleConfigs = { 'agent-identity': { credentialCacheMs: 300_000 } };
    const server = await startTestKernel({ modules: [identityModule], adapters: { sql: fixture.db, clock }, moduleConfigs });
    try {
      const bridge = { credential: server.bridgeKey };
      await server.call('agent-identity/agents/create', { agent_id: 'hal', display_name: 'Hal' }, bridge);
      const issued = (await server.call('agent-identity/device/issue', { agent_id: 'hal', label: 'short', ttl_days: 1 }, bridge)).body;
      const put = () =>
        server.call('agent-identity/secrets/put', { agent_id: 'hal', key: 'k', value: 'v' }, { credential: issued.device_key });
      now = Date.parse(issued.expires_at) - 1;
      expect((await put()).status).toBe(200);
      now += 1;
      expect((await put()).status).toBe(401);
    } finally {
      await server.stop();
      await fixture.cleanup();
    }
  });
});

describe('agent-identity master key rotation', () => {
  it('opens secrets sealed with a previous master key and reseals them with the current one', async () => {
    const [sqlite] = sqlDatabases();
    const fixture = await sqlite!.create();
    const oldKey = newMasterKey();
    const first = await startTestKernel({ modules: [identityModule], adapters: { sql: fixture.db }, config: { masterKey: oldKey } });
    await first.call('agent-identity/agents/create', { agent_id: 'erin', display_name: 'Erin' }, { credential: first.bridgeKey });
    const { device_key: key } = (
      await first.call('agent-identity/device/issue', { agent_id: 'erin', label: 'x' }, { credential: first.bridgeKey })
    ).body;
    await first.call('agent-identity/secrets/put', { agent_id: 'erin', key: 'api', value: 'rotated-value' }, { credential: key });
    const file = (fixture.db.describe().match(/\((.*)\)/) ?? [])[1]!;
    await first.stop();

    const { createSqliteDatabase } = await import('@agentinfra/adapter-sqlite');
    const newKey = newMasterKey();
    const rotated = await startTestKernel({
      modules: [identityModule],
      adapters: { sql: createSqliteDatabase({ filename: file }) },
      config: { masterKey: newKey, previousMasterKeys: [oldKey], jobs: { enabled: false } },
    });
    expect((await rotated.call('agent-identity/secrets/get', { agent_id: 'erin', key: 'api' }, { credential: key })).body).toEqual({
      value: 'rotated-value',
    });
    const identity = rotated.kernel.service<{ resealSecrets(): Promise<number> }>('agent-identity');
    expect(await identity.resealSecrets()).toBe(1);
    expect(await identity.resealSecrets()).toBe(0);
    await rotated.stop();

    const newOnly = await startTestKernel({
      modules: [identityModule],
      adapters: { sql: createSqliteDatabase({ filename: file }) },
      config: { masterKey: newKey },
    });
    expect((await newOnly.call('agent-identity/secrets/get', { agent_id: 'erin', key: 'api' }, { credential: key })).body).toEqual({
      value: 'rotated-value',
    });
    await newOnly.stop();
    await fixture.cleanup();
  });
});
