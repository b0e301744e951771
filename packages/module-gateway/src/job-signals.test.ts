import { JobInterruptedError, type SqlDatabase } from '@agentinfra/core';
import { sqlDatabases } from '@agentinfra/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RENEW_DUE_JOB, REVOKE_JOB } from './gateway-context.js';
import type { RevocationRow } from './gateway-rows.js';
import { gatewayJobs } from './jobs/gateway-jobs.js';
import { type GatewayTestServer, startGatewayTestServer } from './test-support/gateway-test-server.js';
import { pendingRevocation } from './test-support/pending-revocation.js';

const DAY_MS = 86_400_000;
/** A directory nothing listens on: a job that reaches the CA fails on it (and records that failure). */
const UNREACHABLE_DIRECTORY = 'https://127.0.0.1:1/dir';

const job = (name: string) => {
  const found = gatewayJobs.find((definition) => definition.name === name);
  if (!found) throw new Error(`no job ${name}`);
  return found;
};

/** A bound host with a certificate (rows only) that is due for renewal: under a third of its 90-day lifetime left. */
async function seedDueCertificate(db: SqlDatabase, host: string, notAfter: number) {
  const hostId = `hst_${host}`;
  await db
    .knex('gateway_hosts')
    .insert({ host, host_id: hostId, agent_id: 'alice', bound_at: Date.now(), ips: '[]', ips_updated_at: null });
  await db.knex('gateway_certificates').insert({
    host,
    cert_id: `crt_${host}`,
    host_id: hostId,
    agent_id: 'alice',
    order_id: `ord_${host}`,
    directory_url: UNREACHABLE_DIRECTORY,
    chain_pem: 'not read by renewal',
    key_sealed: 'not read by renewal',
    serial: `serial-${host}`,
    not_before: notAfter - 90 * DAY_MS,
    not_after: notAfter,
    issued_at: notAfter - 90 * DAY_MS,
  });
}

/**
 * The gateway's jobs stop when their signal aborts (JobDefinition in core:
 * the runner records a timed-out attempt as failed and may start the retry
 * while a handler that ignores the signal still runs). Rows only, `jobs`
 * off: the handlers are called as the runner calls them.
 */
describe.each(sqlDatabases())('agent-gateway jobs and their signal on $name', ({ create }) => {
  let db: SqlDatabase;
  let cleanup: () => Promise<void>;
  let test: GatewayTestServer;

  beforeAll(async () => {
    ({ db, cleanup } = await create());
    test = await startGatewayTestServer({
      db,
      gateway: { directoryUrl: UNREACHABLE_DIRECTORY, httpPort: 0, dnsServers: ['127.0.0.1:1'] },
      jobs: { enabled: false },
    });
  });
  afterAll(async () => {
    await test?.server.stop();
    await cleanup?.();
  });

  it('gateway.renew-due stops between hosts once its signal aborts', async () => {
    const hosts = ['due-1.example.test', 'due-2.example.test', 'due-3.example.test'];
    for (const [index, host] of hosts.entries()) await seedDueCertificate(db, host, Date.now() + DAY_MS * (index + 1));
    const controller = new AbortController();
    const reason = new Error('the job timed out');
    // The attempt times out while the first host's order is being stored.
    const abortOnFirstOrder = (query: { sql: string }) => {
      if (/^insert into [`"]gateway_orders[`"]/i.test(query.sql)) controller.abort(reason);
    };
    db.knex.on('query', abortOnFirstOrder);
    try {
      await expect(
        job(RENEW_DUE_JOB).run({ payload: null, attempt: 1, scheduledFor: Date.now(), signal: controller.signal, service: test.service }),
      ).rejects.toBe(reason);
    } finally {
      db.knex.off('query', abortOnFirstOrder);
    }
    const ordered = (await db.knex('gateway_orders').whereIn('host', hosts).select('host')) as Array<{ host: string }>;
    expect(ordered.map((row) => row.host)).toEqual([hosts[0]]);
  });

  it('gateway.revoke stops before asking the CA once its signal aborted, and a shutdown records nothing', async () => {
    const row = pendingRevocation('rvk_interrupted', UNREACHABLE_DIRECTORY);
    await db.knex('gateway_revocations').insert(row);
    const controller = new AbortController();
    const reason = new JobInterruptedError();
    controller.abort(reason);
    await expect(
      job(REVOKE_JOB).run({
        payload: { revocation_id: row.revocation_id },
        attempt: 1,
        scheduledFor: null,
        signal: controller.signal,
        service: test.service,
      }),
    ).rejects.toBe(reason);
    expect(await db.knex('gateway_revocations').where({ revocation_id: row.revocation_id }).first()).toMatchObject({
      status: 'pending',
      attempts: 0,
      last_error: null,
    });
  });

  // Review: a gateway.revoke job whose last attempt's process died is marked failed by the runner, but the handler
  // never recorded it, so the revocation stayed pending and kept the certificate's sealed key at rest for good.
  it('the sweep ends pending revocations whose job failed or is gone, and drops their keys', async () => {
    const hosts = {
      failed: 'revoke-failed.example.test',
      gone: 'revoke-gone.example.test',
      queued: 'revoke-queued.example.test',
      unnamedFailed: 'revoke-unnamed-failed.example.test',
      unnamedQueued: 'revoke-unnamed-queued.example.test',
    };
    type Case = keyof typeof hosts;
    const revocations = {} as Record<Case, RevocationRow>;
    for (const name of Object.keys(hosts) as Case[]) {
      const host = hosts[name];
      await seedDueCertificate(db, host, Date.now() + 60 * DAY_MS);
      const released = await test.gateway('/host/release', { agent_id: 'alice', host }, 'alice');
      expect(released.body.certificate_revocation).toBe('scheduled');
      revocations[name] = (await db.knex('gateway_revocations').where({ host }).first()) as RevocationRow;
      expect(revocations[name]).toMatchObject({ status: 'pending', key_sealed: 'not read by renewal', job_id: expect.any(String) });
    }
    // As the runner leaves them: the last attempt's lease expired with no attempt left, or the job was deleted.
    await db.knex('core_jobs').where({ id: revocations.failed.job_id }).update({ status: 'failed', last_error: 'lease expired' });
    await db.knex('core_jobs').where({ id: revocations.gone.job_id }).delete();
    // Rows from before migration 20261203000200 kept no job id: their jobs are found by dedupe key.
    await db.knex('core_jobs').where({ id: revocations.unnamedFailed.job_id }).update({ status: 'failed', last_error: 'lease expired' });
    await db
      .knex('gateway_revocations')
      .whereIn('revocation_id', [revocations.unnamedFailed.revocation_id, revocations.unnamedQueued.revocation_id])
      .update({ job_id: null });

    await test.service.sweep();
    const row = async (name: Case) => db.knex('gateway_revocations').where({ revocation_id: revocations[name].revocation_id }).first();
    for (const name of ['failed', 'gone', 'unnamedFailed'] as const) {
      expect(await row(name)).toMatchObject({
        status: 'failed',
        key_sealed: null,
        last_error: expect.stringContaining('The job running this revocation ended without finishing it'),
      });
    }
    for (const name of ['queued', 'unnamedQueued'] as const) {
      expect(await row(name)).toMatchObject({ status: 'pending', key_sealed: 'not read by renewal', last_error: null });
    }
  });
});
