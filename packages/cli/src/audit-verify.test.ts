import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createPostgresDatabase } from '@agentinfra/adapter-postgres';
import { createSqliteDatabase } from '@agentinfra/adapter-sqlite';
import { type ChainReport, createAuditLog, type SqlDatabase, systemClock } from '@agentinfra/core';
import { postgresAvailability, testDatabaseUrl } from '@agentinfra/testkit';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeChainReport } from './commands/audit.js';
import { freshKeys, runCli, runCliInProcess } from './serve-process.test-support.js';

interface Target {
  name: string;
  /** Environment selecting the database (besides keys and the data dir). */
  env(dir: string, schema: string): Record<string, string>;
  open(dir: string, schema: string): SqlDatabase;
  drop(schema: string): Promise<void>;
}

const sqlite: Target = {
  name: 'sqlite',
  env: () => ({}),
  open: (dir) => createSqliteDatabase({ filename: join(dir, 'data', 'agentinfra.db') }),
  drop: async () => {},
};

const postgres: Target = {
  name: 'postgres',
  env: (_dir, schema) => ({ AGENTINFRA_DATABASE_URL: testDatabaseUrl(), AGENTINFRA_DATABASE_SCHEMA: schema }),
  open: (_dir, schema) => createPostgresDatabase({ url: testDatabaseUrl(), schema, poolMax: 2 }),
  drop: async (schema) => {
    const admin = new pg.Client({ connectionString: testDatabaseUrl() });
    await admin.connect();
    try {
      await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    } finally {
      await admin.end();
    }
  },
};

const targets = postgresAvailability().available ? [sqlite, postgres] : [sqlite];

// #15: `agentinfra audit verify` walks the chain of a real database and exits 1 on a break. One run as a process of its
// own per engine; the other runs call the same `main` in this process (runCliInProcess), to spare ~2 s of CPU each.
describe.each(targets)('agentinfra audit verify on $name', (target) => {
  const dir = mkdtempSync(join(tmpdir(), 'agentinfra-audit-'));
  const schema = `t_${randomBytes(6).toString('hex')}`;
  const env = {
    AGENTINFRA_DATA_DIR: join(dir, 'data'),
    ...freshKeys(),
    ...target.env(dir, schema),
  };
  const verify = (...flags: string[]) => runCliInProcess(['audit', 'verify', ...flags], { cwd: dir, env });
  let sql: SqlDatabase;

  beforeAll(async () => {
    expect((await verify()).stderr).toContain('run `agentinfra migrate`');
    expect((await runCliInProcess(['migrate'], { cwd: dir, env })).code).toBe(0);
    sql = target.open(dir, schema);
    const audit = createAuditLog({ knex: sql.knex, clock: systemClock });
    await Promise.all(
      Array.from({ length: 40 }, (_, index) =>
        audit.record({ action: 'secret.get', outcome: 'success', target: `agent:a/secret:k${index}`, agentId: 'a' }),
      ),
    );
  }, 60_000);

  afterAll(async () => {
    await sql?.close();
    await target.drop(schema);
    rmSync(dir, { recursive: true, force: true });
  });

  it('passes on an untouched chain, with a summary and JSON', async () => {
    const result = await runCli(['audit', 'verify'], { cwd: dir, env });
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^audit chain ok: 40 events checked \(seq 1\.\.40\), head [0-9a-f]{64}\n$/);
    const json = await verify('--json');
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toMatchObject({ ok: true, checked: 40, head: { seq: 40 } });
  });

  it('exits 1 naming the row when one was edited, and passes once it is put back', async () => {
    const row = await sql.knex('core_audit').where({ seq: 12 }).first();
    await sql.knex('core_audit').where({ seq: 12 }).update({ target: 'agent:mallory/secret:k' });
    // With --json the report goes to stdout and the one-line summary to stderr.
    const result = await verify('--json');
    expect(result.code).toBe(1);
    expect(JSON.parse(result.stdout)).toMatchObject({ ok: false, checked: 11, problem: { seq: 12 } });
    expect(result.stderr).toContain(
      'audit chain BROKEN at seq 12: hash does not match the row (the row was edited); 11 events verified before it (seq 1..11)\n',
    );
    await sql.knex('core_audit').where({ seq: 12 }).update({ target: row.target });
    expect((await verify()).code).toBe(0);
  });

  it('exits 1 when a row was deleted, in the middle or at the head', async () => {
    const middle = await sql.knex('core_audit').where({ seq: 20 }).first();
    await sql.knex('core_audit').where({ seq: 20 }).delete();
    const result = await verify('--json');
    expect(result.code).toBe(1);
    expect(JSON.parse(result.stdout)).toMatchObject({ ok: false, checked: 19, problem: { seq: 20 } });
    expect(result.stderr).toContain('row 20 is missing (next row is 21); 19 events verified before it (seq 1..19)\n');
    await sql.knex('core_audit').insert(middle);

    await sql.knex('core_audit').where({ seq: 40 }).delete();
    const head = await verify();
    expect(head.code).toBe(1);
    expect(head.stderr).toContain('BROKEN at seq 40');
  });
});

// Walkthrough: a break at seq 5 read "4 events verified before it (seq 1..17)", the range of the whole chain.
describe('describeChainReport', () => {
  const hash = 'ab'.repeat(32);
  const broken = (checked: number, anchor: number, seq: number): ChainReport => ({
    ok: false,
    checked,
    head: { seq: 17, hash },
    anchor: { seq: anchor, hash },
    problem: { seq, reason: 'hash does not match the row (the row was edited)' },
  });

  it('names the range of the events verified before a break', () => {
    expect(describeChainReport(broken(4, 0, 5))).toBe(
      'audit chain BROKEN at seq 5: hash does not match the row (the row was edited); 4 events verified before it (seq 1..4)',
    );
    expect(describeChainReport(broken(4, 6, 11))).toBe(
      'audit chain BROKEN at seq 11: hash does not match the row (the row was edited); 4 events verified before it ' +
        '(seq 7..10, retention anchor at seq 6)',
    );
    expect(describeChainReport(broken(0, 0, 1))).toBe(
      'audit chain BROKEN at seq 1: hash does not match the row (the row was edited); 0 events verified before it',
    );
  });

  it('names the whole chain when it is intact', () => {
    expect(describeChainReport({ ok: true, checked: 11, head: { seq: 17, hash }, anchor: { seq: 6, hash } })).toBe(
      `audit chain ok: 11 events checked (seq 7..17, retention anchor at seq 6), head ${hash}`,
    );
    expect(describeChainReport({ ok: true, checked: 0, head: { seq: 0, hash }, anchor: { seq: 0, hash } })).toBe(
      `audit chain ok: 0 events checked (no events), head ${hash}`,
    );
  });
});
