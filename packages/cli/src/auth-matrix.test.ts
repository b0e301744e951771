import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createFsBlobStore } from '@agentinfra/adapter-fs';
import type { AnyRoute } from '@agentinfra/core';
import { startTestKernel, type TestKernel } from '@agentinfra/core/testing';
import { defaultModules } from '@agentinfra/modules';
import { sqlDatabases } from '@agentinfra/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHashEmbedder } from './hash-embedder.test-support.js';

/**
 * Every route of every default module × every kind of credential
 * (issue #2 "auth matrix"). A route without an example body here fails the
 * test, so new routes cannot skip the matrix.
 */
const future = new Date(Date.now() + 86_400_000).toISOString();
const examples: Record<string, Record<string, unknown>> = {
  'agent-identity/agents/create': { agent_id: 'matrix-new', display_name: 'New' },
  'agent-identity/device/issue': { agent_id: 'alice', label: 'matrix' },
  'agent-identity/device/revoke': { device_id: 'dev_matrix_unknown' },
  'agent-identity/delegate': { from_agent: 'alice', to_agent: 'bob', scope: ['memory.read'], expires_at: future },
  'agent-identity/delegate/revoke': { delegation_id: 'dlg_matrix_unknown' },
  'agent-identity/secrets/put': { agent_id: 'alice', key: 'k', value: 'v' },
  'agent-identity/secrets/get': { agent_id: 'alice', key: 'k' },
  'agent-identity/secrets/list': { agent_id: 'alice' },
  'agent-identity/secrets/delete': { agent_id: 'alice', key: 'nope' },
  'agent-identity/settings/list': {},
  'agent-identity/settings/set': { key: 'postbox_retention_days', value: 30 },
  'agent-identity/teams/add': { team: 'matrix', agent_id: 'alice' },
  'agent-identity/teams/remove': { team: 'matrix', agent_id: 'alice' },
  'agent-memory/mem/write': { agent_id: 'alice', kind: 'episode', text: 't', provenance: 'p', scope: ['self'] },
  'agent-memory/mem/query': { agent_id: 'alice', q: 'query', k: 3, scope: ['self'] },
  'agent-memory/mem/forget': { agent_id: 'alice', provenance: 'nothing' },
  'agent-memory/set/put': { agent_id: 'alice', name: 's', add_ids: [], remove_ids: [] },
  'agent-memory/set/get': { agent_id: 'alice', name: 's' },
  'agent-memory/kv/put': { agent_id: 'alice', key: 'k', value: 1, scope: ['self'] },
  'agent-memory/kv/get': { agent_id: 'alice', key: 'k', scope: ['self'] },
  'agent-memory/kv/delete': { agent_id: 'alice', key: 'k' },
  'agent-artifacts/register': { agent_id: 'alice', key: 'reports/q1.pdf', mime: 'application/pdf', size: 10, ttl_days: 1 },
  'agent-artifacts/commit': { artifact_id: 'art_matrix_unknown', sha256: 'a'.repeat(64) },
  'agent-artifacts/grant': { artifact_id: 'art_matrix_unknown', to_agent: 'bob', expires_at: future },
  'agent-artifacts/revoke': { artifact_id: 'art_matrix_unknown', to_agent: 'bob', expires_at: future },
  'agent-artifacts/fetch': { grant_token: 'g_unknown' },
  'agent-artifacts/list': { agent_id: 'alice', prefix: '' },
  'agent-artifacts/download': { artifact_id: 'art_matrix_unknown' },
  'agent-gateway/host/claim': { agent_id: 'alice', host: 'matrix.example.com' },
  'agent-gateway/host/release': { agent_id: 'alice', host: 'matrix.example.com' },
  'agent-gateway/cert/issue': { host: 'matrix.example.com' },
  'agent-gateway/cert/renew': {},
  'agent-gateway/cert/get': { agent_id: 'alice', host: 'matrix.example.com' },
  'agent-gateway/ip/report': { host: 'matrix.example.com', ips: ['192.0.2.1'] },
  'agent-gateway/list': {},
  'agent-scheduler/job/put': {
    agent_id: 'alice',
    name: 'nightly',
    cadence: '@every 1h',
    callback_url: 'https://example.com/hook',
    secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
    max_attempts: 3,
  },
  'agent-scheduler/job/pause': { agent_id: 'alice', name: 'none' },
  'agent-scheduler/job/resume': { agent_id: 'alice', name: 'none' },
  'agent-scheduler/job/delete': { agent_id: 'alice', name: 'none' },
  'agent-scheduler/job/list': { agent_id: 'alice', limit: 5 },
  'agent-scheduler/runs/list': { agent_id: 'alice', name: 'none', limit: 5 },
  'agent-scheduler/runs/retry': { agent_id: 'alice', run_id: 'run_none' },
  'agent-postbox/ingest': {
    to: 'nobody@localhost',
    from: 'a@example.com',
    subject: 's',
    body: 'b',
    headers: { 'message-id': '<m1@example.com>' },
    mime_ref: 'none',
  },
  'agent-postbox/alloc': { agent_id: 'alice', local_part: 'alice-matrix' },
  'agent-postbox/addresses': { agent_id: 'alice' },
  'agent-postbox/send': { agent_id: 'alice', from: 'alice-matrix@localhost', to: 'x@example.com', subject: 's', body: 'b' },
  'agent-postbox/list': { agent_id: 'alice', direction: 'in', limit: 5, since: null },
  'agent-postbox/mark_read': { agent_id: 'alice', ids: ['msg_none'] },
  'agent-postbox/raw': { agent_id: 'alice', id: 'msg_none' },
  'agent-postbox/rule/put': { agent_id: 'alice', name: 'r', match: { from_like: '%@example.com' }, actions: [{ move_to: 'x' }] },
  'agent-postbox/rule/list': { agent_id: 'alice' },
  'agent-postbox/rule/delete': { agent_id: 'alice', name: 'none' },
  'agent-postbox/webhook/register': { agent_id: 'alice', url: 'https://example.com/hook' },
  'agent-postbox/webhook/rotate': { agent_id: 'alice', webhook_id: 'whk_none' },
  'agent-postbox/webhook/list': { agent_id: 'alice' },
  'agent-postbox/webhook/delete': { agent_id: 'alice', webhook_id: 'whk_none' },
  'agent-mesh/peer/register': { agent_id: 'alice', pubkey: Buffer.alloc(32, 9).toString('base64'), endpoint: '203.0.113.7:51820' },
  'agent-mesh/peer/heartbeat': { agent_id: 'alice' },
  'agent-mesh/acl/put': { from_agent: 'bob', to_agent: 'alice', port: 22, proto: 'tcp' },
  'agent-mesh/acl/revoke': { from_agent: 'carol', to_agent: 'alice', port: 22, proto: 'tcp' },
  'agent-mesh/acl/accept': { from_agent: 'alice', to_agent: 'carol' },
  'agent-mesh/netmap': { agent_id: 'alice' },
  'agent-mesh/wg_config': { agent_id: 'alice' },
  'agent-mesh/psk/rotate': { a: 'alice', b: 'carol' },
  'agent-identity/audit/list': { limit: 5 },
  'agent-identity/admin/agents/list': { query: 'ali' },
  'agent-identity/admin/agents/get': { agent_id: 'alice' },
  'agent-identity/admin/devices/list': { agent_id: 'alice' },
  'agent-identity/admin/delegations/list': { agent_id: 'alice' },
  'agent-identity/admin/summary': {},
  'agent-memory/admin/memories/list': { agent_id: 'alice' },
  'agent-memory/admin/provenances/list': { agent_id: 'alice' },
  'agent-memory/admin/summary': {},
  'agent-artifacts/admin/artifacts/list': {},
  'agent-artifacts/admin/grants/list': { artifact_id: 'art_matrix_unknown' },
  'agent-artifacts/admin/summary': {},
  'agent-mesh/admin/peers/list': {},
  'agent-mesh/admin/acls/list': {},
  'agent-mesh/admin/refusals/list': {},
  'agent-mesh/admin/summary': {},
  'agent-gateway/admin/hosts/list': {},
  'agent-gateway/admin/summary': {},
  'agent-postbox/admin/addresses/list': {},
  'agent-postbox/admin/messages/list': { quarantined: true },
  'agent-postbox/admin/messages/get': { id: 'msg_none' },
  'agent-postbox/admin/quarantine/release': { id: 'msg_none' },
  'agent-postbox/admin/quarantine/delete': { id: 'msg_none' },
  'agent-postbox/admin/webhooks/list': {},
  'agent-postbox/admin/webhooks/redeliver': { webhook_id: 'whk_none' },
  'agent-postbox/admin/summary': {},
  'agent-scheduler/admin/jobs/list': {},
  'agent-scheduler/admin/runs/list': { status: 'failed' },
  'agent-scheduler/admin/summary': {},
};

/**
 * `allowed`: past authentication and authorization; `authenticated`: past
 * authentication, the handler decides; `ignored`: the credential plays no
 * part (the payload carries its own proof), so every credential gets the same answer.
 */
/** The one permission of the `delegationNarrow` credential: routes needing another permission must refuse it. */
const NARROW_SCOPE = ['postbox.read'];

type Outcome = 'allowed' | 'authenticated' | 'ignored' | 401 | 403;

describe.each(sqlDatabases())('auth matrix over every route on $name', ({ create }) => {
  let server: TestKernel;
  let cleanup: () => Promise<void>;
  const credentials: Record<string, string> = {};

  beforeAll(async () => {
    const fixture = await create();
    cleanup = fixture.cleanup;
    const blobs = createFsBlobStore({
      dir: mkdtempSync(join(tmpdir(), 'agentinfra-matrix-')),
      publicUrl: 'http://127.0.0.1',
      signingKey: 'k'.repeat(32),
    });
    server = await startTestKernel({
      modules: defaultModules,
      adapters: { sql: fixture.db, embedder: createHashEmbedder(), blobStore: blobs.store, mounts: [blobs.mount] },
      moduleConfigs: { 'agent-gateway': { httpPort: 0, dnsServers: ['127.0.0.1:1'] }, 'agent-postbox': { smtp: { port: 0 } } },
    });
    const bridge = { credential: server.bridgeKey };
    for (const agent of ['alice', 'bob', 'carol'])
      await server.call('agent-identity/agents/create', { agent_id: agent, display_name: agent }, bridge);
    const issue = async (agent: string) => (await server.call('agent-identity/device/issue', { agent_id: agent, label: 'm' }, bridge)).body;
    credentials.own = (await issue('alice')).device_key;
    credentials.other = (await issue('bob')).device_key;
    const revoked = await issue('alice');
    await server.call('agent-identity/device/revoke', { device_id: revoked.device_id }, bridge);
    credentials.revoked = revoked.device_key;
    const expired = await issue('alice');
    await server.kernel.sql.knex('identity_devices').where({ device_id: expired.device_id }).update({ expires_at: 1 });
    credentials.expired = expired.device_key;
    const delegate = async (scope: string[]) =>
      (
        await server.call(
          'agent-identity/delegate',
          { from_agent: 'alice', to_agent: 'bob', scope, expires_at: future },
          { credential: credentials.own },
        )
      ).body;
    credentials.delegationAll = (await delegate(defaultModules.flatMap((module) => [...module.permissions]))).token;
    credentials.delegationNarrow = (await delegate(NARROW_SCOPE)).token;
    const expiredDelegation = await delegate(['memory.read']);
    await server.kernel.sql
      .knex('identity_delegations')
      .where({ delegation_id: expiredDelegation.delegation_id })
      .update({ expires_at: 1 });
    credentials.delegationExpired = expiredDelegation.token;
    credentials.unknown = 'dk_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA';
    credentials.bridge = server.bridgeKey;
  });

  afterAll(async () => {
    await server.stop();
    await cleanup();
  });

  function expected(route: AnyRoute<unknown>, credential: string): Outcome {
    const { auth } = route;
    if (auth.kind === 'none') return 'ignored';
    if (['none', 'unknown', 'revoked', 'expired', 'delegationExpired'].includes(credential)) return 401;
    if (auth.kind === 'any') {
      // An `any` route declaring a permission refuses delegations without it before its handler runs (#14).
      return credential === 'delegationNarrow' && auth.permission && !NARROW_SCOPE.includes(auth.permission) ? 403 : 'authenticated';
    }
    if (auth.kind === 'bridge') return credential === 'bridge' ? 'allowed' : 403;
    if (credential === 'bridge') return auth.bridge === false ? 403 : 'allowed';
    if (credential === 'own') return 'allowed';
    if (credential === 'other') return 403;
    if (auth.delegation === false) return 403;
    if (credential === 'delegationNarrow') return NARROW_SCOPE.includes(auth.permission) ? 'allowed' : 403;
    return 'allowed';
  }

  const routes = defaultModules.flatMap((module) =>
    (module.routes as readonly AnyRoute<unknown>[]).map((route) => ({ path: `${module.name}${route.path}`, route })),
  );
  const kinds = [
    'none',
    'unknown',
    'revoked',
    'expired',
    'other',
    'delegationAll',
    'delegationNarrow',
    'delegationExpired',
    'own',
    'bridge',
  ];

  it('has an example body for every route', () => {
    expect(routes.map((r) => r.path).filter((path) => !examples[path])).toEqual([]);
  });

  it.each(routes)('$path answers each credential as its declaration says', async ({ path, route }) => {
    const anonymous = await server.call(path, examples[path], {});
    for (const kind of kinds) {
      const response = await server.call(path, examples[path], kind === 'none' ? {} : { credential: credentials[kind] });
      const want = expected(route, kind);
      const label = `${path} with ${kind}: ${response.status} ${JSON.stringify(response.body)}`;
      if (want === 'allowed') expect([401, 403], label).not.toContain(response.status);
      else if (want === 'authenticated') expect(response.status, label).not.toBe(401);
      else if (want === 'ignored') expect(response.status, label).toBe(anonymous.status);
      else expect(response.status, label).toBe(want);
      expect(response.status, label).toBeLessThan(500);
    }
  });

  it('refuses the bridge key where SPEC.md §5 requires a device key, saying so, and stores nothing (#11)', async () => {
    const secrets = () => server.kernel.sql.knex('identity_secrets').count({ n: '*' }).first();
    const before = await secrets();
    for (const path of ['agent-identity/secrets/put', 'agent-postbox/alloc', 'agent-postbox/send']) {
      const response = await server.call(path, examples[path], { credential: credentials.bridge });
      expect(response.status, path).toBe(403);
      expect(response.body.error.message, path).toMatch(/device key/);
    }
    expect(await secrets()).toEqual(before);
  });

  it('refuses the bridge key naming an agent that does not exist with 404 on every agent route, storing nothing', async () => {
    const knex = server.kernel.sql.knex;
    const tables =
      knex.client.config.client === 'pg'
        ? (
            await knex.raw<{ rows: Array<{ table_name: string }> }>(
              `SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'`,
            )
          ).rows.map((row) => row.table_name)
        : (await knex.raw<Array<{ name: string }>>(`SELECT name FROM sqlite_master WHERE type = 'table'`)).map((row) => row.name);
    // The audit log records refused bridge-key uses too (#15), and background jobs come and go on their own: neither is a partial write.
    const data = tables.filter((table) => !table.startsWith('core_audit') && !table.startsWith('core_job'));
    const counts = async () =>
      Object.fromEntries(
        await Promise.all(data.map(async (table) => [table, Number((await knex(table).count({ n: '*' }).first())?.n)] as const)),
      );
    const before = await counts();
    // Routes without an example body fail the test above.
    const agentRoutes = routes.filter(({ path, route }) => route.auth.kind === 'agent' && route.auth.bridge !== false && examples[path]);
    expect(agentRoutes.length).toBeGreaterThan(30);
    for (const { path, route } of agentRoutes) {
      const example = examples[path];
      if (route.auth.kind !== 'agent' || !example) continue;
      const [named] = route.auth.agents(example, { kind: 'bridge' });
      const body = Object.fromEntries(Object.entries(example).map(([field, value]) => [field, value === named ? 'ghost' : value]));
      const response = await server.call(path, body, { credential: credentials.bridge });
      const label = `${path} ${JSON.stringify(body)}: ${response.status} ${JSON.stringify(response.body)}`;
      expect(response.status, label).toBe(404);
      expect(response.body.error, label).toEqual({ code: 'not_found', message: 'Agent "ghost" does not exist.' });
    }
    expect(await counts()).toEqual(before);
    // Naming an existing agent, the same bridge key still acts for it.
    const written = await server.call('agent-memory/mem/write', examples['agent-memory/mem/write'], { credential: credentials.bridge });
    expect(written.status).toBe(200);
  });

  it('matches SPEC.md §5 for the listed endpoints', () => {
    const kindOf = (path: string) => routes.find((r) => r.path === path)!.route.auth;
    for (const path of ['agents/create', 'device/issue', 'settings/list', 'settings/set'])
      expect(kindOf(`agent-identity/${path}`).kind).toBe('bridge');
    expect(kindOf('agent-identity/delegate')).toMatchObject({ kind: 'agent', bridge: false });
    // #11: the spec requires a device key here, so the bridge key (also the MTA's credential) may not act as the agent.
    for (const path of ['agent-identity/secrets/put', 'agent-postbox/alloc', 'agent-postbox/send'])
      expect(kindOf(path), path).toMatchObject({ kind: 'agent', bridge: false });
    expect(kindOf('agent-identity/device/revoke').kind).toBe('any');
  });
});
