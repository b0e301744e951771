import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keysetPage, whereAfterKeyset } from '../pagination/keyset.js';
import type { SqlDatabase } from '../ports/sql-database.js';

/** A database made for one contract run, and how to get rid of it afterwards. */
export interface SqlDatabaseFixture {
  db: SqlDatabase;
  /** Opens a second handle on the same database, as another process would; the caller closes it. */
  openAnother(): SqlDatabase;
  /** Closes `db` (also when the suite already closed it) and removes what `create` made (file, schema). */
  cleanup(): Promise<void>;
}

/** Options of {@link runSqlDatabaseContract}. */
export interface SqlDatabaseContractOptions {
  /** Shown in the suite title, e.g. `sqlite` or `postgres`. */
  name: string;
  /** Makes a fresh, empty database; called twice per run (the second one is closed by the suite). */
  create: () => Promise<SqlDatabaseFixture>;
}

const TABLE = 'contract_items';

/** A row of the contract table; `big` is a `bigInteger`, `payload` a JSON `text`. */
interface ItemRow {
  id: string;
  name: string;
  big: number | null;
  payload: string | null;
  qty: number;
}

/**
 * The behaviour every {@link SqlDatabase} adapter guarantees, as vitest
 * suites: schema builder, CRUD, `bigInteger` as numbers, JSON text,
 * transactions, read snapshots, unique violations, `returning` and `SKIP LOCKED` (when the
 * capabilities say so), parallel writers, `ping`, `describe` and `close`.
 * Call it at the top level of a test file, once per adapter.
 * @example runSqlDatabaseContract({ name: 'sqlite', create: async () => { const db = createSqliteDatabase({ filename }); return { db, cleanup: () => db.close() }; } })
 */
export function runSqlDatabaseContract({ name, create }: SqlDatabaseContractOptions): void {
  describe(`SqlDatabase contract: ${name}`, () => {
    let fixture: SqlDatabaseFixture | undefined;
    const database = (): SqlDatabase => {
      if (fixture === undefined) throw new Error('the contract database was not created');
      return fixture.db;
    };
    const items = () => database().knex<ItemRow>(TABLE);
    const item = (id: string, extra: Partial<ItemRow> = {}): ItemRow => ({
      id,
      name: `name of ${id}`,
      big: null,
      payload: null,
      qty: 0,
      ...extra,
    });

    beforeAll(async () => {
      fixture = await create();
      const { knex } = fixture.db;
      await knex.schema.dropTableIfExists(TABLE);
      await knex.schema.createTable(TABLE, (table) => {
        table.string('id', 64).primary();
        table.string('name', 200).notNullable();
        table.bigInteger('big').nullable();
        table.text('payload').nullable();
        table.integer('qty').notNullable().defaultTo(0);
        table.unique(['name'], { indexName: `${TABLE}_name_unique`, useConstraint: false });
      });
    });

    afterAll(async () => {
      await fixture?.cleanup();
    });

    it('declares its dialect and capabilities', () => {
      const db = database();
      expect(['sqlite', 'postgres']).toContain(db.dialect);
      for (const capability of ['returning', 'skipLocked', 'multiProcess'] as const) {
        expect(typeof db.capabilities[capability]).toBe('boolean');
      }
    });

    it('sees tables made with the schema builder', async () => {
      const { knex } = database();
      expect(await knex.schema.hasTable(TABLE)).toBe(true);
      expect(await knex.schema.hasTable('contract_missing')).toBe(false);
      expect(await knex.schema.hasColumn(TABLE, 'payload')).toBe(true);
    });

    it('inserts, selects, updates and deletes rows', async () => {
      await items().insert([item('crud-1', { qty: 1 }), item('crud-2', { qty: 2 })]);
      expect(await items().where('id', 'like', 'crud-%').orderBy('id').select('id', 'qty')).toEqual([
        { id: 'crud-1', qty: 1 },
        { id: 'crud-2', qty: 2 },
      ]);
      expect(await items().where({ id: 'crud-1' }).update({ qty: 10 })).toBe(1);
      expect(await items().where({ id: 'crud-1' }).first()).toEqual(item('crud-1', { qty: 10 }));
      expect(await items().where({ id: 'crud-2' }).delete()).toBe(1);
      expect(await items().where({ id: 'crud-2' }).first()).toBeUndefined();
      expect(await items().where({ id: 'crud-missing' }).update({ qty: 1 })).toBe(0);
    });

    it('round-trips bigInteger values as JavaScript numbers', async () => {
      const values = [Date.now(), 0, -1, Number.MAX_SAFE_INTEGER, -Number.MAX_SAFE_INTEGER];
      await items().insert(values.map((big, index) => item(`big-${index}`, { big })));
      const rows = await items().where('id', 'like', 'big-%').orderBy('id').select('big');
      expect(rows.map((row) => row.big)).toEqual(values);
      for (const row of rows) expect(typeof row.big).toBe('number');
      const recent = await items()
        .where('big', '>=', values[0] ?? 0)
        .select('id');
      expect(recent.map((row) => row.id).sort()).toEqual(['big-0', 'big-3']);
    });

    it('returns count(*) as a JavaScript number', async () => {
      await items().insert([item('count-1'), item('count-2'), item('count-3')]);
      const [row] = await items().where('id', 'like', 'count-%').count({ n: '*' });
      expect(row?.n).toBe(3);
    });

    it('pages through rows that share a sort value with whereAfterKeyset and keysetPage, in both orders, none twice or skipped', async () => {
      // qty repeats (the created_at of rows written in the same millisecond); id tells them apart.
      const rows = Array.from({ length: 9 }, (_, index) => item(`keyset-${index}`, { qty: index % 3 }));
      await items().insert(rows);
      // 9 rows in pages of 3: the third page is full and the last, so it must come without a cursor.
      const limit = 3;
      for (const order of ['asc', 'desc'] as const) {
        const seen: string[] = [];
        let cursor: string | null = null;
        // Bounded: a position that does not advance would page forever.
        for (let pages = 0; pages < rows.length + 1; pages += 1) {
          const query = items().where('id', 'like', 'keyset-%').select('id', 'qty');
          if (cursor !== null) {
            const after = JSON.parse(cursor) as { qty: number; id: string };
            whereAfterKeyset(query, order, ['qty', after.qty], ['id', after.id]);
          }
          const read = await query
            .orderBy([
              { column: 'qty', order },
              { column: 'id', order },
            ])
            .limit(limit + 1);
          const { page, next_cursor } = keysetPage(read, limit, (last) => JSON.stringify({ qty: last.qty, id: last.id }));
          expect(page.length).toBeGreaterThan(0);
          expect(page.length).toBeLessThanOrEqual(limit);
          seen.push(...page.map((row) => row.id));
          cursor = next_cursor;
          if (cursor === null) break;
        }
        expect(cursor).toBeNull();
        const expected = [...rows].sort((a, b) => a.qty - b.qty || (a.id < b.id ? -1 : 1)).map((row) => row.id);
        expect(seen).toEqual(order === 'asc' ? expected : expected.reverse());
      }
    });

    it('round-trips JSON written with JSON.stringify into text columns', async () => {
      const value = {
        text: 'héllo ☃ 😀 "quoted" \\ back\nslash / tab\t',
        nested: { list: [1, 2.5, -0.125, null, true, false], empty: {}, none: [] },
        long: 'x'.repeat(20_000),
      };
      await items().insert(item('json-1', { payload: JSON.stringify(value) }));
      const row = await items().where({ id: 'json-1' }).first();
      expect(row?.payload).toBe(JSON.stringify(value));
      expect(JSON.parse(row?.payload ?? 'null')).toEqual(value);
    });

    it('commits a transaction whose callback resolves', async () => {
      const result = await database().knex.transaction(async (trx) => {
        await trx<ItemRow>(TABLE).insert([item('trx-commit-1'), item('trx-commit-2')]);
        await trx<ItemRow>(TABLE).where({ id: 'trx-commit-2' }).update({ qty: 2 });
        return trx<ItemRow>(TABLE).where({ id: 'trx-commit-2' }).first();
      });
      expect(result?.qty).toBe(2);
      expect(await items().where('id', 'like', 'trx-commit-%').count({ n: '*' })).toEqual([{ n: 2 }]);
    });

    it('rolls back a transaction whose callback throws, and rethrows the error', async () => {
      const failure = new Error('callback failed');
      await expect(
        database().knex.transaction(async (trx) => {
          await trx<ItemRow>(TABLE).insert(item('trx-throw-1'));
          throw failure;
        }),
      ).rejects.toBe(failure);
      expect(await items().where({ id: 'trx-throw-1' }).first()).toBeUndefined();
    });

    it('rolls back an explicit transaction on rollback()', async () => {
      const trx = await database().knex.transaction();
      await trx<ItemRow>(TABLE).insert(item('trx-rollback-1'));
      expect(await trx<ItemRow>(TABLE).where({ id: 'trx-rollback-1' }).first()).toBeDefined();
      await trx.rollback();
      expect(await items().where({ id: 'trx-rollback-1' }).first()).toBeUndefined();
    });

    it('recognises a duplicate primary key as a unique violation', async () => {
      await items().insert(item('dup-pk'));
      const error = await items()
        .insert(item('dup-pk', { name: 'another name' }))
        .then(
          () => undefined,
          (caught: unknown) => caught,
        );
      expect(error).toBeInstanceOf(Error);
      expect(database().isUniqueViolation(error)).toBe(true);
    });

    it('recognises a duplicate in a unique index as a unique violation, also inside a transaction', async () => {
      await items().insert(item('dup-index-1', { name: 'shared name' }));
      const error = await database()
        .knex.transaction(async (trx) => {
          await trx<ItemRow>(TABLE).insert(item('dup-index-2', { name: 'fresh name' }));
          await trx<ItemRow>(TABLE).insert(item('dup-index-3', { name: 'shared name' }));
        })
        .then(
          () => undefined,
          (caught: unknown) => caught,
        );
      expect(database().isUniqueViolation(error)).toBe(true);
      expect(await items().where({ id: 'dup-index-2' }).first()).toBeUndefined();
    });

    it('does not take other errors for unique violations', async () => {
      const db = database();
      const caught = (promise: Promise<unknown>) =>
        promise.then(
          () => {
            throw new Error('the statement was expected to fail');
          },
          (error: unknown) => error,
        );
      const notNull = await caught(db.knex(TABLE).insert({ id: 'not-null-1' }));
      const missingTable = await caught(db.knex('contract_missing').select('*'));
      const syntax = await caught(db.knex.raw('select from where'));
      for (const error of [notNull, missingTable, syntax]) expect(db.isUniqueViolation(error)).toBe(false);
      for (const value of [undefined, null, 'unique', 23505, {}, new Error('UNIQUE constraint failed')]) {
        expect(db.isUniqueViolation(value)).toBe(false);
      }
    });

    it('returns inserted and updated rows with returning() when capable', async (context) => {
      const db = database();
      if (!db.capabilities.returning) context.skip('the adapter declares returning: false');
      const now = Date.now();
      const inserted = await items()
        .insert(item('ret-1', { big: now }))
        .returning(['id', 'big', 'qty']);
      expect(inserted).toEqual([{ id: 'ret-1', big: now, qty: 0 }]);
      const updated = await items().where({ id: 'ret-1' }).update({ qty: 7 }).returning(['id', 'qty']);
      expect(updated).toEqual([{ id: 'ret-1', qty: 7 }]);
    });

    it('skips rows locked by another transaction with SKIP LOCKED when capable', async (context) => {
      const db = database();
      if (!db.capabilities.skipLocked) context.skip('the adapter declares skipLocked: false');
      await items().insert([item('lock-1'), item('lock-2')]);
      const holder = await db.knex.transaction();
      try {
        await holder<ItemRow>(TABLE).where({ id: 'lock-1' }).forUpdate().select('id');
        const claimed = await db.knex.transaction((trx) =>
          trx<ItemRow>(TABLE).where('id', 'like', 'lock-%').orderBy('id').forUpdate().skipLocked().select('id'),
        );
        expect(claimed).toEqual([{ id: 'lock-2' }]);
      } finally {
        await holder.rollback();
      }
    });

    it('lands every one of 20 parallel transactional inserts', async () => {
      const ids = Array.from({ length: 20 }, (_, index) => `parallel-${String(index).padStart(2, '0')}`);
      await Promise.all(
        ids.map((id, index) =>
          database().knex.transaction(async (trx) => {
            await trx<ItemRow>(TABLE).insert(item(id, { big: Date.now(), qty: index }));
          }),
        ),
      );
      const rows = await items().where('id', 'like', 'parallel-%').orderBy('id').select('id', 'qty');
      expect(rows).toEqual(ids.map((id, index) => ({ id, qty: index })));
    });

    it('runs exclusive sections one at a time, releasing the lock when one throws', async () => {
      let running = 0;
      let overlapped = false;
      const section = (fail: boolean) =>
        database().exclusive({ key: 'contract' }, async () => {
          running += 1;
          if (running > 1) overlapped = true;
          await new Promise((resolve) => setTimeout(resolve, 20));
          running -= 1;
          if (fail) throw new Error('section failed');
          return 'done';
        });
      const results = await Promise.allSettled([section(false), section(true), section(false), section(false)]);
      expect(results.map((result) => result.status)).toEqual(['fulfilled', 'rejected', 'fulfilled', 'fulfilled']);
      expect(overlapped).toBe(false);
    });

    it('runs exclusive sections of two handles on one database one at a time, as two processes would', async () => {
      const other = fixture?.openAnother();
      if (other === undefined) throw new Error('the contract database was not created');
      try {
        let running = 0;
        let overlapped = false;
        const section = (db: SqlDatabase, label: string) =>
          db.exclusive({ key: 'contract:handles' }, async () => {
            running += 1;
            if (running > 1) overlapped = true;
            await new Promise((resolve) => setTimeout(resolve, 150));
            running -= 1;
            return label;
          });
        await expect(Promise.all([section(database(), 'first'), section(other, 'second')])).resolves.toEqual(['first', 'second']);
        expect(overlapped).toBe(false);
      } finally {
        await other.close();
      }
    });

    it('serialises check-then-insert transactions that take the same lock', async () => {
      const quota = 3;
      const attempts = Array.from({ length: 12 }, (_, index) =>
        database().knex.transaction(async (trx) => {
          await database().lockInTransaction(trx, 'contract:quota');
          const held = await trx<ItemRow>(TABLE).where('id', 'like', 'quota-%').count({ n: '*' }).first();
          if (Number(held?.n ?? 0) >= quota) return false;
          await new Promise((resolve) => setTimeout(resolve, 5));
          await trx<ItemRow>(TABLE).insert(item(`quota-${String(index).padStart(2, '0')}`, { qty: index }));
          return true;
        }),
      );
      const created = (await Promise.all(attempts)).filter(Boolean);
      expect(created).toHaveLength(quota);
      expect(Number((await items().where('id', 'like', 'quota-%').count({ n: '*' }).first())?.n)).toBe(quota);
    });

    it('reads one snapshot in readSnapshot while another transaction commits, and refuses writes there', async () => {
      await items().insert(item('snapshot-1', { qty: 1 }));
      let commit: Promise<unknown> = Promise.resolve();
      const seen = await database().readSnapshot(async (trx) => {
        const first = await trx<ItemRow>(TABLE).where('id', 'like', 'snapshot-%').sum({ total: 'qty' }).first();
        // Outside the snapshot: on PostgreSQL it commits now; on SQLite it waits for the file's one connection.
        commit = database().knex.transaction(async (other) => {
          await other<ItemRow>(TABLE).where({ id: 'snapshot-1' }).update({ qty: 10 });
          await other<ItemRow>(TABLE).insert(item('snapshot-2', { qty: 5 }));
        });
        await Promise.race([commit, new Promise((resolve) => setTimeout(resolve, 200))]);
        const second = await trx<ItemRow>(TABLE).where('id', 'like', 'snapshot-%').sum({ total: 'qty' }).first();
        return [Number(first?.total), Number(second?.total)];
      });
      await commit;
      expect(seen).toEqual([1, 1]);
      expect(Number((await items().where('id', 'like', 'snapshot-%').sum({ total: 'qty' }).first())?.total)).toBe(15);
      await expect(database().readSnapshot((trx) => trx<ItemRow>(TABLE).insert(item('snapshot-3')))).rejects.toThrow(/read-?only/i);
      expect(await items().where({ id: 'snapshot-3' }).first()).toBeUndefined();
      // The connection writes again once the snapshot ended.
      await items().insert(item('snapshot-3'));
    });

    it('answers ping', async () => {
      await expect(database().ping()).resolves.toBeUndefined();
    });

    it('describes its location without credentials', () => {
      const text = database().describe();
      expect(text.startsWith(database().dialect)).toBe(true);
      expect(text).not.toMatch(/:\/\/[^/@\s]*:[^/@\s]*@/);
      expect(text).not.toMatch(/password/i);
    });

    it('fails queries and ping after close', async () => {
      const second = await create();
      try {
        await second.db.ping();
        await second.db.close();
        await expect(second.db.ping()).rejects.toThrow();
        await expect(second.db.knex.raw('select 1')).rejects.toThrow();
      } finally {
        await second.cleanup();
      }
    });
  });
}
