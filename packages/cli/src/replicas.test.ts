import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { postgresAvailability, redisAvailability, testDatabaseUrl, testRedisUrl } from '@agentinfra/testkit';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { post, type ServeProcess, startServe } from './serve-process.test-support.js';

/**
 * Issue #3: several `agentinfra serve` replicas on one PostgreSQL schema and
 * one Redis behave as one service.
 */
const available = postgresAvailability().available && redisAvailability().available;

describe.runIf(available)('three replicas on PostgreSQL and Redis', () => {
  const schema = `t_${randomBytes(6).toString('hex')}`;
  const dir = mkdtempSync(join(tmpdir(), 'agentinfra-replicas-'));
  const bridgeKey = `bk_${randomBytes(32).toString('base64url')}`;
  const env = {
    AGENTINFRA_DATA_DIR: dir,
    AGENTINFRA_BRIDGE_KEY: bridgeKey,
    AGENTINFRA_MASTER_KEY: randomBytes(32).toString('base64'),
    AGENTINFRA_DATABASE_URL: testDatabaseUrl(),
    AGENTINFRA_DATABASE_SCHEMA: schema,
    AGENTINFRA_REDIS_URL: testRedisUrl(),
    AGENTINFRA_REDIS_KEY_PREFIX: `${schema}:`,
    AGENTINFRA_RATE_LIMIT_PER_MINUTE: '100',
    AGENTINFRA_EMBEDDER: 'wordvec',
    AGENTINFRA_ACME_HTTP_PORT: '0',
    AGENTINFRA_SMTP_PORT: '0',
  };
  let replicas: ServeProcess[] = [];

  beforeAll(async () => {
    replicas = await Promise.all([0, 1, 2].map(() => startServe(['--port', '0'], { cwd: dir, env, timeoutMs: 60_000 })));
  }, 90_000);

  afterAll(async () => {
    await Promise.all(replicas.filter((r) => r.child.exitCode === null).map((r) => r.stop('SIGKILL')));
    const admin = new pg.Client({ connectionString: testDatabaseUrl() });
    await admin.connect();
    await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await admin.end();
  });

  it('all migrated the same schema concurrently and report ready', async () => {
    for (const replica of replicas) {
      const ready = await fetch(`${replica.url}/ready`);
      expect(ready.status).toBe(200);
      expect(replica.output()).toContain('sql=postgres');
    }
  });

  it('shares identity and memory: written through one replica, read through another', async () => {
    const [a, b, c] = replicas as [ServeProcess, ServeProcess, ServeProcess];
    expect((await post(a.url, 'agent-identity/agents/create', { agent_id: 'alice', display_name: 'Alice' }, bridgeKey)).status).toBe(200);
    const key = (await post(b.url, 'agent-identity/device/issue', { agent_id: 'alice', label: 'x' }, bridgeKey)).body.device_key;
    const written = await post(
      c.url,
      'agent-memory/mem/write',
      { agent_id: 'alice', kind: 'semantic', text: 'The cat is named Miso.', provenance: 'r', scope: ['self'] },
      key,
    );
    expect(written.status).toBe(200);
    const query = await post(
      a.url,
      'agent-memory/mem/query',
      { agent_id: 'alice', q: 'what is the cat called', k: 1, scope: ['self'] },
      key,
    );
    expect(query.body.hits?.[0]?.id, JSON.stringify(query.body)).toBe(written.body.id);
  });

  it('shares the per-credential rate limit through Redis: the 101st request across replicas gets 429', async () => {
    await post(replicas[0]!.url, 'agent-identity/agents/create', { agent_id: 'limited', display_name: 'L' }, bridgeKey);
    const key = (await post(replicas[1]!.url, 'agent-identity/device/issue', { agent_id: 'limited', label: 'x' }, bridgeKey)).body
      .device_key;
    const statuses: number[] = [];
    for (let i = 0; i < 101; i += 1) {
      const replica = replicas[i % 3]!;
      statuses.push((await post(replica.url, 'agent-memory/kv/get', { agent_id: 'limited', key: 'k', scope: ['self'] }, key)).status);
    }
    expect(statuses.slice(0, 100).every((status) => status === 404)).toBe(true);
    expect(statuses[100]).toBe(429);
  });

  it('holds a per-agent quota across replicas: of 12 concurrent /alloc, exactly the quota succeed', async () => {
    const [a, b, c] = replicas as [ServeProcess, ServeProcess, ServeProcess];
    await post(a.url, 'agent-identity/agents/create', { agent_id: 'mailer', display_name: 'M' }, bridgeKey);
    const key = (await post(b.url, 'agent-identity/device/issue', { agent_id: 'mailer', label: 'x' }, bridgeKey)).body.device_key;
    const quota = { key: 'postbox_max_addresses_per_agent', value: 3 };
    expect((await post(c.url, 'agent-identity/settings/set', quota, bridgeKey)).status).toBe(200);
    const statuses = await Promise.all(
      Array.from({ length: 12 }, (_, index) =>
        post(replicas[index % 3]!.url, 'agent-postbox/alloc', { agent_id: 'mailer', local_part: `mailer-${index}` }, key).then(
          (response) => response.status,
        ),
      ),
    );
    expect(statuses.filter((status) => status === 200)).toHaveLength(3);
    expect(statuses.filter((status) => status === 409)).toHaveLength(9);
  });

  it('keeps every acknowledged write when a replica is killed mid-load', async () => {
    await post(replicas[0]!.url, 'agent-identity/agents/create', { agent_id: 'writer', display_name: 'W' }, bridgeKey);
    const keys = await Promise.all(
      [0, 1, 2].map(
        async (i) =>
          (await post(replicas[i]!.url, 'agent-identity/device/issue', { agent_id: 'writer', label: `w${i}` }, bridgeKey)).body
            .device_key as string,
      ),
    );
    const acknowledged: string[] = [];
    const victim = replicas[2]!;
    const load = async (replicaIndex: number, count: number) => {
      for (let i = 0; i < count; i += 1) {
        try {
          const response = await post(
            replicas[replicaIndex]!.url,
            'agent-memory/mem/write',
            { agent_id: 'writer', kind: 'episode', text: `event ${replicaIndex}-${i}`, provenance: 'kill-test', scope: ['self'] },
            keys[replicaIndex],
          );
          if (response.status === 200) acknowledged.push(response.body.id);
        } catch {
          return;
        }
      }
    };
    const loads = [load(0, 30), load(1, 30), load(2, 1_000)];
    await new Promise((resolve) => setTimeout(resolve, 150));
    victim.child.kill('SIGKILL');
    await Promise.all(loads);
    expect(acknowledged.length).toBeGreaterThan(30);
    const admin = new pg.Client({ connectionString: testDatabaseUrl() });
    await admin.connect();
    try {
      const { rows } = await admin.query(`SELECT id FROM "${schema}".memory_records WHERE id = ANY($1)`, [acknowledged]);
      expect(rows.length).toBe(acknowledged.length);
    } finally {
      await admin.end();
    }
  });
});
