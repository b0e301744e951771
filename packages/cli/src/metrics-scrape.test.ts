import { execFile, spawnSync } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { promisify } from 'node:util';
import { newWebhookSecret } from '@agentinfra/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type OpsServer, startOpsServer } from './ops-server.test-support.js';

const promtoolFound = spawnSync('promtool', ['--version'], { stdio: 'ignore' }).status === 0;
if (!promtoolFound) {
  const line = '[agentinfra] promtool is not installed: run .ci/install-prometheus.sh';
  if (process.env.CI) throw new Error(line);
  console.warn(`${line}; skipping the promtool check`);
}
const swaksFound = spawnSync('swaks', ['--version'], { stdio: 'ignore' }).status === 0;
if (!swaksFound) {
  const line = '[agentinfra] swaks is not installed: run .ci/install-mail-tools.sh';
  if (process.env.CI) throw new Error(line);
  console.warn(`${line}; skipping the SMTP series`);
}

/** One sample line of the text format: name, labels and value. */
interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

function parseSamples(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match) continue;
    const labels: Record<string, string> = {};
    for (const pair of (match[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g))
      labels[pair[1] as string] = pair[2] as string;
    samples.push({ name: match[1] as string, labels, value: Number(match[3]) });
  }
  return samples;
}

/** Sum of the samples of `name` whose labels include `labels`. */
function total(samples: readonly Sample[], name: string, labels: Record<string, string> = {}): number {
  return samples
    .filter((sample) => sample.name === name && Object.entries(labels).every(([key, value]) => sample.labels[key] === value))
    .reduce((sum, sample) => sum + sample.value, 0);
}

const METRICS_TOKEN = 'mt_scrape-token-for-the-test';

// #15: GET /metrics on a server that did real work, checked by promtool.
describe('GET /metrics after real work', () => {
  let ops: OpsServer;
  let receiver: Server;
  let before: Sample[];
  let text: string;

  const scrape = async (credential?: string) =>
    fetch(`${ops.server.url}/metrics`, { headers: credential ? { authorization: `Bearer ${credential}` } : {} });

  beforeAll(async () => {
    ops = await startOpsServer({
      config: { metrics: { token: METRICS_TOKEN }, http: { rateLimitPerMinute: 30, failedAuthPerMinute: 100 } },
    });
    const { server } = ops;
    before = parseSamples(await (await scrape(METRICS_TOKEN)).text());
    const bridge = { credential: server.bridgeKey };
    for (const agent of ['alice', 'bob'])
      await server.call('agent-identity/agents/create', { agent_id: agent, display_name: agent }, bridge);
    const alice = (await server.call('agent-identity/device/issue', { agent_id: 'alice', label: 'm' }, bridge)).body.device_key;
    const bob = (await server.call('agent-identity/device/issue', { agent_id: 'bob', label: 'm' }, bridge)).body.device_key;
    for (let index = 0; index < 5; index++) {
      const written = await server.call(
        'agent-memory/mem/write',
        { agent_id: 'alice', kind: 'semantic', text: `fact number ${index}`, provenance: 'test', scope: ['self'] },
        { credential: alice },
      );
      expect(written.status).toBe(200);
    }
    expect((await server.call('agent-memory/mem/query', { agent_id: 'alice', q: 'fact', k: 3 }, { credential: alice })).status).toBe(200);
    expect(
      (await server.call('agent-memory/kv/get', { agent_id: 'alice', key: 'k', scope: ['self'] }, { credential: 'dev_not_a_real_key' }))
        .status,
    ).toBe(401);
    expect((await server.call('agent-memory/kv/get', { agent_id: 'alice', key: 'k', scope: ['self'] })).status).toBe(401);
    expect((await server.call('agent-memory/kv/get', { agent_id: 'alice', key: 'k', scope: ['self'] }, { credential: bob })).status).toBe(
      403,
    );
    const bobKv = { agent_id: 'bob', key: 'k', value: 1, scope: ['self'] };
    expect((await server.call('agent-memory/kv/put', bobKv, { credential: bob })).status).toBe(200);
    let refused = 0;
    for (let index = 0; index < 40 && refused === 0; index++) {
      const response = await server.call('agent-memory/kv/get', { agent_id: 'bob', key: 'k', scope: ['self'] }, { credential: bob });
      if (response.status === 429) refused += 1;
    }
    expect(refused).toBe(1);
    if (swaksFound) {
      const smtp = /smtp on (\S+)/.exec(server.kernel.describeModules().join('\n'))?.[1] as string;
      const address = (await server.call('agent-postbox/alloc', { agent_id: 'alice', local_part: 'alice' }, { credential: alice })).body
        .address;
      const swaks = (to: string) =>
        promisify(execFile)('swaks', ['--server', smtp, '--to', to, '--from', 'a@example.com', '--body', 'hello']);
      await swaks(address);
      await swaks('nobody@localhost').catch(() => undefined);
    }
    // A stored certificate (as an ACME order leaves it) for the expiry gauge.
    await server.kernel.sql.knex('gateway_certificates').insert({
      host: 'www.example.com',
      cert_id: 'crt_metrics',
      host_id: 'hst_metrics',
      agent_id: 'alice',
      order_id: 'ord_metrics',
      directory_url: 'https://acme.invalid/directory',
      chain_pem: '-----BEGIN CERTIFICATE-----',
      key_sealed: 'sealed',
      serial: '01',
      not_before: Date.now() - 86_400_000,
      not_after: Date.now() + 30 * 86_400_000,
      issued_at: Date.now(),
    });
    receiver = createServer((_request, response) => response.writeHead(204).end());
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const callback_url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/tick`;
    const job = { agent_id: 'alice', name: 'tick', cadence: '@every 1s', callback_url, secret: newWebhookSecret(), max_attempts: 1 };
    expect((await server.call('agent-scheduler/job/put', job, bridge)).status).toBe(200);
    const deadline = Date.now() + 15_000;
    while (total(parseSamples(await (await scrape(METRICS_TOKEN)).text()), 'agentinfra_scheduler_attempts_total') === 0) {
      if (Date.now() > deadline) throw new Error('the scheduler delivered no callback in 15 s');
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    const response = await scrape(METRICS_TOKEN);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('text/plain');
    text = await response.text();
  }, 60_000);

  afterAll(async () => {
    await ops?.stop();
    receiver?.close();
  });

  it('refuses a scrape without the token or the bridge key, and takes either', async () => {
    expect((await scrape()).status).toBe(401);
    expect((await scrape('mt_wrong-token-of-some-length')).status).toBe(401);
    expect((await scrape(ops.server.bridgeKey)).status).toBe(200);
  });

  it('audits a scrape with the bridge key as bridge.use with its request id, and one with the token not at all', async () => {
    const withKey = await fetch(`${ops.server.url}/metrics`, {
      headers: { authorization: `Bearer ${ops.server.bridgeKey}`, 'x-request-id': 'scrape-with-bridge-key' },
    });
    expect(withKey.status).toBe(200);
    await withKey.text();
    const bridge = { credential: ops.server.bridgeKey };
    const { body } = await ops.server.call('agent-identity/audit/list', { action: 'bridge.use', limit: 50 }, bridge);
    const scrapes = (body.events as Array<{ target: string; request_id: string | null }>).filter(
      (event) => event.target === 'kernel/metrics',
    );
    expect(scrapes.map((event) => event.request_id)).toContain('scrape-with-bridge-key');
    const withToken = await fetch(`${ops.server.url}/metrics`, {
      headers: { authorization: `Bearer ${METRICS_TOKEN}`, 'x-request-id': 'scrape-with-token' },
    });
    await withToken.text();
    const after = await ops.server.call('agent-identity/audit/list', { limit: 50 }, bridge);
    expect(JSON.stringify(after.body)).not.toContain('scrape-with-token');
  });

  it.runIf(promtoolFound)('passes promtool check metrics', () => {
    const checked = spawnSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8' });
    expect(checked.stderr + checked.stdout).toBe('');
    expect(checked.status).toBe(0);
  });

  it('moved the request, auth, rate-limit, embedder, job, scheduler, delivery, SMTP and certificate series', () => {
    const after = parseSamples(text);
    const moved = (name: string, labels: Record<string, string> = {}) => total(after, name, labels) - total(before, name, labels);
    expect(
      moved('agentinfra_http_request_duration_seconds_count', { module: 'agent-memory', route: '/mem/write', status_class: '2xx' }),
    ).toBe(5);
    expect(moved('agentinfra_http_request_duration_seconds_count', { module: 'agent-memory', route: '/kv/get', status_class: '4xx' })).toBe(
      4,
    );
    expect(moved('agentinfra_auth_failures_total', { reason: 'unknown' })).toBe(1);
    expect(moved('agentinfra_auth_failures_total', { reason: 'missing' })).toBe(1);
    expect(moved('agentinfra_auth_failures_total', { reason: 'forbidden' })).toBe(1);
    expect(moved('agentinfra_rate_limited_total', { module: 'agent-memory', route: '/kv/get' })).toBe(1);
    expect(moved('agentinfra_embedder_duration_seconds_count', { operation: 'embed' })).toBeGreaterThanOrEqual(1);
    expect(moved('agentinfra_webhook_deliveries_total', { source: 'scheduler', outcome: 'delivered' })).toBeGreaterThanOrEqual(1);
    expect(total(after, 'agentinfra_job_claim_lateness_seconds_count')).toBeGreaterThan(0);
    const expiry = total(after, 'agentinfra_certificate_expiry_timestamp_seconds', { host: 'www.example.com' });
    expect((expiry - Date.now() / 1000) / 86_400).toBeCloseTo(30, 0);
    expect(moved('agentinfra_scheduler_fires_total')).toBeGreaterThanOrEqual(1);
    expect(moved('agentinfra_scheduler_attempts_total', { outcome: 'succeeded' })).toBeGreaterThanOrEqual(1);
    if (swaksFound) {
      expect(moved('agentinfra_smtp_sessions_total')).toBe(2);
      expect(moved('agentinfra_smtp_messages_total', { outcome: 'accepted' })).toBe(1);
      expect(moved('agentinfra_smtp_recipients_rejected_total')).toBe(1);
      const inbound = ['delivered', 'quarantined'].map((outcome) => moved('agentinfra_postbox_inbound_messages_total', { outcome }));
      expect(inbound[0]! + inbound[1]!).toBe(1);
    }
    expect(total(after, 'agentinfra_process_cpu_user_seconds_total')).toBeGreaterThan(0);
    for (const name of ['agentinfra_http_requests_in_flight', 'agentinfra_db_pool_in_use', 'agentinfra_db_pool_waiting']) {
      expect(after.some((sample) => sample.name === name)).toBe(true);
    }
  });

  it('keeps label values bounded: no agent ids, credentials or addresses', () => {
    const values = parseSamples(text).flatMap((sample) => Object.values(sample.labels));
    for (const value of values) expect(value).not.toMatch(/alice|bob|dev_|dlg_|bk_|127\.0\.0\.1/);
  });
});
