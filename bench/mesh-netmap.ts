/**
 * agent-mesh /netmap and /wg_config latency over HTTP, for two mesh sizes
 * with the same number of peers visible to a typical caller, so that the
 * cost can be seen to follow the caller's visible peers and not the mesh.
 *
 *   npx tsx bench/mesh-netmap.ts    (PostgreSQL from AGENTINFRA_TEST_DATABASE_URL when reachable; SQLite always)
 *
 * Meshes: 1,000 peers with 10,000 ACLs (the issue's target: p50 ≤ 50 ms) and
 * 10,000 peers with 100,000 ACLs. Each peer opens 10 random ports to 10
 * random others, so a typical caller sees about 20 peers in both. A "hub"
 * agent that 1,000 peers may reach shows the growth with visible peers.
 * Rows are seeded straight into the module's tables (the same rows the
 * endpoints write); every measured call is a real HTTP request with a
 * device key, sequential, after `ANALYZE` and one warm-up call per caller
 * (which also creates the pairwise PSKs).
 *
 * Baseline: /peer/heartbeat of the same callers on the same server (device
 * key check plus one indexed UPDATE): the floor of an authenticated call.
 * "vs 1k mesh" divides by the same row's p50 on the 1,000-peer mesh.
 */
import { randomBytes } from 'node:crypto';
import type { SqlDatabase } from '../packages/core/src/index.js';
import { startTestKernel, type TestKernel } from '../packages/core/src/testing/test-kernel.js';
import { type IdentityService, identityConfigSchema, identityModule } from '../packages/module-identity/src/index.js';
import { aclProtocols, createAddressPool, meshModule } from '../packages/module-mesh/src/index.js';
import { sqlDatabases } from '../packages/testkit/src/index.js';

const SIZES = [
  { peers: 1_000, acls: 10_000 },
  { peers: 10_000, acls: 100_000 },
];
const HUB_FANIN = 1_000;
const CALLERS = 40;
const SAMPLES = 400;
const HUB_SAMPLES = 60;

interface Row {
  db: string;
  mesh: string;
  caller: string;
  visible: number;
  endpoint: string;
  p50: number;
  p99: number;
  baseline: number;
  small?: number;
}

const rows: Row[] = [];
const agentName = (index: number) => `peer-${String(index).padStart(5, '0')}`;

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] as number;
}

/** Inserts rows 400 at a time (below SQLite's 500 terms per compound SELECT, which knex uses for multi-row inserts). */
async function insertChunked(db: SqlDatabase, table: string, items: readonly Record<string, unknown>[]): Promise<void> {
  const size = 400;
  for (let start = 0; start < items.length; start += size) {
    await db
      .knex(table)
      .insert(items.slice(start, start + size))
      .onConflict()
      .ignore();
  }
}

/** Seeds `peers` peers, `acls` random ACLs (10 per peer) and a hub that `HUB_FANIN` peers may reach. */
async function seed(db: SqlDatabase, size: { peers: number; acls: number }): Promise<void> {
  const pool = createAddressPool('100.64.0.0/10');
  const now = Date.now();
  const peers = Array.from({ length: size.peers + 1 }, (_, index) => ({
    agent_id: index === size.peers ? 'hub' : agentName(index),
    pubkey: randomBytes(32).toString('base64'),
    endpoint: `198.51.${(index >> 8) & 255}.${index & 255}:51820`,
    address: pool.addressAt(index + 1),
    registered_at: now,
    updated_at: now,
    last_seen: now,
  }));
  await insertChunked(db, 'mesh_peers', peers);
  await db.knex('mesh_address_pools').insert({ prefix: pool.prefix, last_offset: peers.length });
  const perPeer = size.acls / size.peers;
  const acls: Record<string, unknown>[] = [];
  for (let from = 0; from < size.peers; from += 1) {
    for (let k = 0; k < perPeer; k += 1) {
      let to = Math.floor(Math.random() * size.peers);
      if (to === from) to = (to + 1) % size.peers;
      const proto = aclProtocols[k % 3] as string;
      acls.push({
        from_agent: agentName(from),
        to_agent: agentName(to),
        proto,
        port: proto === 'icmp' ? 0 : 1 + ((from * 31 + k * 7) % 65_535),
        created_at: now,
      });
    }
  }
  for (let index = 0; index < HUB_FANIN; index += 1) {
    acls.push({ from_agent: agentName(index), to_agent: 'hub', proto: 'tcp', port: 443, created_at: now });
  }
  await insertChunked(db, 'mesh_acls', acls);
  await db.knex.raw('analyze');
}

/** Sequential calls of `path` as the given callers, round robin; returns sorted latencies in ms. */
async function measure(server: TestKernel, path: string, callers: ReadonlyArray<{ key: string }>, samples: number): Promise<number[]> {
  const latencies: number[] = [];
  for (let index = 0; index < samples; index += 1) {
    const caller = callers[index % callers.length] as { key: string };
    const started = performance.now();
    const response = await fetch(`${server.url}/functions/v1/agent-mesh${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${caller.key}`, 'content-type': 'application/json' },
      body: '{}',
    });
    await response.text();
    latencies.push(performance.now() - started);
    if (!response.ok) throw new Error(`${path}: HTTP ${response.status}`);
  }
  return latencies.sort((a, b) => a - b);
}

for (const { name, create } of sqlDatabases()) {
  for (const size of SIZES) {
    const { db, cleanup } = await create();
    const server = await startTestKernel({
      modules: [identityModule, meshModule],
      adapters: { sql: db },
      moduleConfigs: { 'agent-identity': identityConfigSchema.parse({}) },
      config: { http: { validateResponses: false, rateLimitPerMinute: 0 }, log: { level: 'silent' } },
    });
    try {
      const seeding = performance.now();
      await seed(db, size);
      const identity = server.kernel.service<IdentityService>('agent-identity');
      const device = async (agent: string) => {
        await identity.createAgent({ agent_id: agent, display_name: agent });
        return { agent, key: (await identity.issueDevice({ agent_id: agent, label: 'bench' })).device_key };
      };
      const callers = await Promise.all(
        Array.from({ length: CALLERS }, (_, index) => device(agentName(Math.floor((index * size.peers) / CALLERS)))),
      );
      const hub = [await device('hub')];
      const visibleOf = async (caller: { key: string }) => {
        const response = await fetch(`${server.url}/functions/v1/agent-mesh/netmap`, {
          method: 'POST',
          headers: { authorization: `Bearer ${caller.key}`, 'content-type': 'application/json' },
          body: '{}',
        });
        return ((await response.json()) as { peers: unknown[] }).peers.length;
      };
      const typicalVisible = Math.round((await Promise.all(callers.map(visibleOf))).reduce((sum, n) => sum + n, 0) / callers.length);
      const hubVisible = await visibleOf(hub[0] as { key: string });
      await measure(server, '/wg_config', [...callers, ...hub], callers.length + 1);
      console.error(`[bench] ${name}: seeded ${size.peers} peers / ${size.acls} ACLs in ${Math.round(performance.now() - seeding)} ms`);

      const heartbeat = await measure(server, '/peer/heartbeat', callers, SAMPLES);
      const baseline = percentile(heartbeat, 50);
      const mesh = `${size.peers.toLocaleString('en')} peers / ${size.acls.toLocaleString('en')} ACLs`;
      rows.push({
        db: name,
        mesh,
        caller: 'typical',
        visible: typicalVisible,
        endpoint: '/peer/heartbeat (baseline)',
        p50: baseline,
        p99: percentile(heartbeat, 99),
        baseline,
      });
      for (const path of ['/netmap', '/wg_config']) {
        const typical = await measure(server, path, callers, SAMPLES);
        rows.push({
          db: name,
          mesh,
          caller: 'typical',
          visible: typicalVisible,
          endpoint: path,
          p50: percentile(typical, 50),
          p99: percentile(typical, 99),
          baseline,
        });
        const ofHub = await measure(server, path, hub, HUB_SAMPLES);
        rows.push({
          db: name,
          mesh,
          caller: 'hub',
          visible: hubVisible,
          endpoint: path,
          p50: percentile(ofHub, 50),
          p99: percentile(ofHub, 99),
          baseline,
        });
      }
    } finally {
      await server.stop();
      await cleanup();
    }
  }
}

const small = new Map(
  rows.filter((row) => row.mesh.startsWith('1,000 ')).map((row) => [`${row.db} ${row.caller} ${row.endpoint}`, row.p50]),
);
const ms = (value: number) => value.toFixed(2);
console.log('| database | mesh | caller (visible peers) | endpoint | p50 ms | p99 ms | p50 vs heartbeat | p50 vs 1k mesh |');
console.log('|---|---|---|---|---:|---:|---:|---:|');
for (const row of rows) {
  const reference = small.get(`${row.db} ${row.caller} ${row.endpoint}`) ?? row.p50;
  console.log(
    `| ${row.db} | ${row.mesh} | ${row.caller} (${row.visible}) | ${row.endpoint} | ${ms(row.p50)} | ${ms(row.p99)} | ${(row.p50 / row.baseline).toFixed(2)}× | ${(row.p50 / reference).toFixed(2)}× |`,
  );
}
const target = rows.filter(
  (row) => row.mesh.startsWith('1,000 ') && row.caller === 'typical' && row.endpoint !== '/peer/heartbeat (baseline)',
);
console.log(
  `\nTarget p50 ≤ 50 ms on the 1,000-peer mesh: ${target.every((row) => row.p50 <= 50) ? 'met' : 'NOT met'} (${target.map((row) => `${row.db} ${row.endpoint} ${ms(row.p50)} ms`).join(', ')}).`,
);
