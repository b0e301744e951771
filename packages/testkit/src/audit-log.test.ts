import { type AuditLog, chainHash, createAuditLog, GENESIS_HASH, type SqlDatabase, systemClock } from '@agentinfra/core';
import { startTestKernel, type TestKernel } from '@agentinfra/core/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reopenableDatabases } from './reopenable-databases.js';

// #15: the tamper-evident audit log, on SQLite and PostgreSQL.
describe.each(reopenableDatabases())('audit log on $name', ({ create }) => {
  let database: Awaited<ReturnType<typeof create>>;
  let server: TestKernel;
  let sql: SqlDatabase;
  let audit: AuditLog;

  beforeAll(async () => {
    database = await create();
    sql = database.open();
    server = await startTestKernel({ modules: [], adapters: { sql }, listen: false });
    audit = server.kernel.audit;
  });

  afterAll(async () => {
    await server?.stop();
    await database?.cleanup();
  });

  it('keeps one linear chain while two replicas append at once', async () => {
    // A second pool on the same data, as a second `serve` process would have (SQLite: the same file).
    const replica = database.open();
    const other = createAuditLog({ knex: replica.knex, clock: systemClock });
    try {
      const writes = [];
      for (let index = 0; index < 150; index++) {
        writes.push(
          audit.record({ action: 'secret.get', outcome: 'success', target: `agent:a${index % 5}/secret:k`, agentId: `a${index % 5}` }),
        );
        writes.push(other.record({ action: 'secret.put', outcome: 'success', target: `agent:b/secret:k${index}`, agentId: 'b' }));
      }
      await Promise.all(writes);
    } finally {
      await replica.close();
    }
    const report = await audit.verify();
    expect(report).toMatchObject({ ok: true, checked: 300, head: { seq: 300 } });
    const seqs = (await sql.knex('core_audit').select('seq').orderBy('seq')).map((row) => Number(row.seq));
    expect(seqs).toEqual(Array.from({ length: 300 }, (_, index) => index + 1));
  });

  it('finds an edited row, a deleted row and a removed newest row', async () => {
    const row = await sql.knex('core_audit').where({ seq: 10 }).first();
    await sql.knex('core_audit').where({ seq: 10 }).update({ target: 'agent:mallory/secret:k' });
    expect((await audit.verify()).problem).toEqual({ seq: 10, reason: expect.stringContaining('edited') });
    await sql.knex('core_audit').where({ seq: 10 }).update({ target: row.target });
    expect((await audit.verify()).ok).toBe(true);

    const twentieth = await sql.knex('core_audit').where({ seq: 20 }).first();
    await sql.knex('core_audit').where({ seq: 20 }).delete();
    expect((await audit.verify()).problem).toEqual({ seq: 20, reason: expect.stringContaining('missing') });
    await sql.knex('core_audit').insert(twentieth);
    expect((await audit.verify()).ok).toBe(true);

    const newest = await sql.knex('core_audit').orderBy('seq', 'desc').first();
    await sql.knex('core_audit').where({ seq: newest.seq }).delete();
    expect((await audit.verify()).ok).toBe(false);
    await sql.knex('core_audit').insert(newest);
    expect((await audit.verify()).ok).toBe(true);
  });

  it('lists newest first with filters by agent, action and time, and a cursor', async () => {
    const first = await audit.list({ agentId: 'a1', actions: ['secret.get'], limit: 7 });
    expect(first.events).toHaveLength(7);
    expect(first.events.every((event) => event.agent_id === 'a1' && event.action === 'secret.get')).toBe(true);
    expect(first.events[0]?.seq).toBeGreaterThan(first.events[6]?.seq ?? Infinity);
    let all = [...first.events];
    let cursor = first.next_cursor;
    while (cursor) {
      const page = await audit.list({ agentId: 'a1', actions: ['secret.get'], limit: 7, cursor });
      all = [...all, ...page.events];
      cursor = page.next_cursor;
    }
    expect(all).toHaveLength(30);
    expect(new Set(all.map((event) => event.id)).size).toBe(30);
    const none = await audit.list({ since: Date.now() + 60_000, limit: 10 });
    expect(none).toEqual({ events: [], next_cursor: null });
    await expect(audit.list({ limit: 5, cursor: 'c1.bm9wZQ' })).rejects.toMatchObject({ status: 400 });
  });

  it('sweeps old rows and keeps the rest verifiable from the stored anchor', async () => {
    const old = Date.now() - 10 * 86_400_000;
    await sql.knex('core_audit').where('seq', '<=', 120).update({ at: old });
    // Rewrite the hashes of the back-dated rows, as if they had been written then.
    await rechain(sql);
    expect((await audit.verify()).ok).toBe(true);
    const { removed } = await audit.sweep({ before: Date.now() - 86_400_000 });
    expect(removed).toBe(120);
    const report = await audit.verify();
    expect(report).toMatchObject({ ok: true, checked: 180, anchor: { seq: 120 } });
    await audit.record({ action: 'setting.set', outcome: 'success', target: 'setting:audit_retention_days' });
    expect(await audit.verify()).toMatchObject({ ok: true, checked: 181, head: { seq: 301 } });
    await sql.knex('core_audit').where({ seq: 121 }).delete();
    expect((await audit.verify()).problem?.seq).toBe(121);
    const state = await sql.knex('core_audit_state').where({ id: 1 }).first();
    expect({ head: Number(state.head_seq), anchor: Number(state.anchor_seq) }).toEqual({ head: 301, anchor: 120 });
  });
});

/** Recomputes every hash in order, as the append path would have. */
async function rechain(sql: SqlDatabase): Promise<void> {
  const rows = await sql.knex('core_audit').orderBy('seq');
  let previous = GENESIS_HASH;
  for (const row of rows) {
    const next = { ...row, seq: Number(row.seq), at: Number(row.at), prev_hash: previous };
    const hash = chainHash(next);
    await sql.knex('core_audit').where({ seq: row.seq }).update({ prev_hash: previous, hash });
    previous = hash;
  }
  await sql.knex('core_audit_state').where({ id: 1 }).update({ head_hash: previous });
}
