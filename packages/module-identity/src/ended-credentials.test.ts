import { SQL_ID_CHUNK, type SqlDatabase } from '@agentinfra/core';
import { startTestKernel, type TestKernel } from '@agentinfra/core/testing';
import { sqlDatabases } from '@agentinfra/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { identityModule } from './module.js';
import type { IdentityService } from './service.js';

const DAY_MS = 86_400_000;
/** More ended rows than two sweep batches. */
const DUE = 2 * SQL_ID_CHUNK + 203;

describe.each(sqlDatabases())('agent-identity sweep of ended credentials on $name', ({ create }) => {
  let server: TestKernel;
  let cleanup: () => Promise<void>;
  let db: SqlDatabase;
  const now = Date.UTC(2026, 11, 20);
  const clock = { now: () => now };

  beforeAll(async () => {
    const fixture = await create();
    cleanup = fixture.cleanup;
    db = fixture.db;
    // No job worker: the test calls the sweep itself.
    server = await startTestKernel({ modules: [identityModule], adapters: { sql: db, clock }, config: { jobs: { enabled: false } } });
  });

  afterAll(async () => {
    await server?.stop();
    await cleanup?.();
  });

  /** Rows for one table: `DUE` ended more than 7 days ago (expired or revoked), and a few live or recently ended. */
  function rowsFor(prefix: 'dev' | 'dlg') {
    const longAgo = now - 8 * DAY_MS;
    const recently = now - 6 * DAY_MS;
    const later = now + DAY_MS;
    const due = Array.from({ length: DUE }, (_, index) =>
      index % 3 === 0
        ? { id: `${prefix}_due_${index}`, expires_at: later, revoked_at: longAgo }
        : { id: `${prefix}_due_${index}`, expires_at: longAgo - index, revoked_at: null },
    );
    const kept = [
      { id: `${prefix}_live`, expires_at: later, revoked_at: null },
      { id: `${prefix}_expired_recently`, expires_at: recently, revoked_at: null },
      { id: `${prefix}_revoked_recently`, expires_at: later, revoked_at: recently },
      { id: `${prefix}_revoked_after_expiry`, expires_at: recently, revoked_at: now },
    ];
    return { due, kept };
  }

  async function insertAll(table: string, rows: object[]): Promise<void> {
    for (let start = 0; start < rows.length; start += 100) await db.knex(table).insert(rows.slice(start, start + 100));
  }

  it('deletes every device key and delegation ended more than 7 days ago, in batches, and keeps the others', async () => {
    const devices = rowsFor('dev');
    const delegations = rowsFor('dlg');
    await insertAll(
      'identity_devices',
      [...devices.due, ...devices.kept].map(({ id, ...times }) => ({
        device_id: id,
        agent_id: 'ann',
        label: 'l',
        key_hash: `hash-${id}`,
        created_at: 0,
        ...times,
      })),
    );
    await insertAll(
      'identity_delegations',
      [...delegations.due, ...delegations.kept].map(({ id, ...times }) => ({
        delegation_id: id,
        token_hash: `hash-${id}`,
        from_agent: 'ann',
        to_agent: 'ben',
        scope: '[]',
        created_at: 0,
        ...times,
      })),
    );
    const deletes: number[] = [];
    const onResponse = (response: unknown, query: { sql: string }) => {
      if (/^\s*delete\b/i.test(query.sql)) deletes.push(Number(response));
    };
    db.knex.on('query-response', onResponse);
    try {
      expect(await server.kernel.service<IdentityService>('agent-identity').sweepExpired()).toEqual({ devices: DUE, delegations: DUE });
    } finally {
      db.knex.off('query-response', onResponse);
    }
    // No statement deleted more than one batch: 3 batches per table.
    expect(deletes).toHaveLength(6);
    expect(Math.max(...deletes)).toBe(SQL_ID_CHUNK);
    expect(deletes.reduce((sum, count) => sum + count, 0)).toBe(2 * DUE);
    expect(await db.knex('identity_devices').pluck('device_id').orderBy('device_id')).toEqual(devices.kept.map((row) => row.id).sort());
    expect(await db.knex('identity_delegations').pluck('delegation_id').orderBy('delegation_id')).toEqual(
      delegations.kept.map((row) => row.id).sort(),
    );
  });

  it('stops between batches once its job signal aborts (a timed-out sweep does not run on beside its retry)', async () => {
    const devices = rowsFor('dev');
    await insertAll(
      'identity_devices',
      devices.due.map(({ id, ...times }) => ({
        device_id: `${id}_b`,
        agent_id: 'ann',
        label: 'l',
        key_hash: `hash-b-${id}`,
        created_at: 0,
        ...times,
      })),
    );
    const controller = new AbortController();
    const deletes: number[] = [];
    const onResponse = (response: unknown, query: { sql: string }) => {
      if (!/^\s*delete\b/i.test(query.sql)) return;
      deletes.push(Number(response));
      controller.abort(new Error('Timed out after 60000 ms.'));
    };
    db.knex.on('query-response', onResponse);
    try {
      const job = identityModule.jobs?.find((candidate) => candidate.name === 'identity.expiry-sweep');
      const service = server.kernel.service<IdentityService>('agent-identity');
      await expect(job?.run({ payload: null, attempt: 1, scheduledFor: null, signal: controller.signal, service })).rejects.toThrow(
        'Timed out after 60000 ms.',
      );
    } finally {
      db.knex.off('query-response', onResponse);
    }
    expect(deletes).toEqual([SQL_ID_CHUNK]);
    expect(Number((await db.knex('identity_devices').count({ n: '*' }).first())?.n)).toBe(DUE - SQL_ID_CHUNK + 4);
  });
});
