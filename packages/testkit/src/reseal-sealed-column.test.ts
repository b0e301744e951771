import { createAesGcmSecretBox, newMasterKey, resealSealedColumn, type SqlDatabase, UnopenedSealedValuesError } from '@agentinfra/core';
import { describe, expect, it } from 'vitest';
import { beforeFirstTransaction } from './before-first-transaction.js';
import { sqlDatabases } from './sql-databases.js';

const TABLE = 'reseal_items';

/** A row of {@link TABLE}: composite primary key (owner, seq), an extra column in the context, a nullable sealed value. */
interface Item {
  owner: string;
  seq: number;
  label: string;
  sealed: string | null;
}

const contextOf = (row: Pick<Item, 'owner' | 'seq' | 'label'>) => `test.item\0${row.owner}\0${row.seq}\0${row.label}`;
const plaintextOf = (row: Pick<Item, 'owner' | 'seq'>) => `value of ${row.owner}/${row.seq}`;

async function createItems(db: SqlDatabase, rows: readonly Item[]): Promise<void> {
  await db.knex.schema.createTable(TABLE, (table) => {
    table.string('owner', 64).notNullable();
    table.integer('seq').notNullable();
    table.string('label', 64).notNullable();
    table.text('sealed').nullable();
    table.primary(['owner', 'seq']);
  });
  for (let start = 0; start < rows.length; start += 200) await db.knex(TABLE).insert(rows.slice(start, start + 200));
}

/** `perOwner` rows for each owner, sealed with `seal` (seq as a number, so key order is numeric, not textual). */
function itemsOf(owners: readonly string[], perOwner: number, seal: (row: Omit<Item, 'sealed'>) => string | null): Item[] {
  return owners.flatMap((owner) =>
    Array.from({ length: perOwner }, (_, seq) => {
      const row = { owner, seq, label: `label-${seq % 7}` };
      return { ...row, sealed: seal(row) };
    }),
  );
}

const readItems = async (db: SqlDatabase) => (await db.knex(TABLE).select('*').orderBy(['owner', 'seq'])) as Item[];

describe.each(sqlDatabases())('resealSealedColumn on $name', ({ create }) => {
  const [oldKey, newKey, lostKey] = [newMasterKey(), newMasterKey(), newMasterKey()];
  const old = createAesGcmSecretBox({ masterKey: oldKey });
  const rotated = createAesGcmSecretBox({ masterKey: newKey, previousMasterKeys: [oldKey] });
  const newOnly = createAesGcmSecretBox({ masterKey: newKey });
  const sealWith = (box: typeof old) => (row: Omit<Item, 'sealed'>) => box.seal({ plaintext: plaintextOf(row), context: contextOf(row) });
  const reseal = (db: SqlDatabase, signal?: AbortSignal) =>
    resealSealedColumn({
      sql: db,
      secretBox: rotated,
      table: TABLE,
      keyColumns: ['owner', 'seq'],
      sealedColumn: 'sealed',
      extraColumns: ['label'],
      contextOf,
      signal,
    });

  it('reseals every old value over several pages of a composite key, so each opens under the new key alone', async () => {
    const { db, cleanup } = await create();
    try {
      // 3 × 450 rows: pages of 500 end in the middle of an owner; every 10th row is already current, every 25th has no value.
      const rows = itemsOf(['ann', 'bob', 'cyd'], 450, (row) =>
        row.seq % 25 === 0 ? null : row.seq % 10 === 0 ? sealWith(rotated)(row) : sealWith(old)(row),
      );
      await createItems(db, rows);
      const current = new Map(rows.filter((row) => row.seq % 10 === 0).map((row) => [`${row.owner}/${row.seq}`, row.sealed]));
      const oldCount = rows.filter((row) => row.seq % 25 !== 0 && row.seq % 10 !== 0).length;

      expect(await reseal(db)).toBe(oldCount);
      const after = await readItems(db);
      expect(after).toHaveLength(rows.length);
      for (const row of after) {
        if (row.sealed === null) {
          expect(row.seq % 25).toBe(0);
          continue;
        }
        expect(newOnly.open({ sealed: row.sealed, context: contextOf(row) })).toBe(plaintextOf(row));
        if (row.seq % 10 === 0) expect(row.sealed).toBe(current.get(`${row.owner}/${row.seq}`));
      }
      expect(await reseal(db)).toBe(0);
    } finally {
      await cleanup();
    }
  });

  it('keeps a value its owner rewrote between the read and the update', async () => {
    const { db, cleanup } = await create();
    try {
      const rows = itemsOf(['ann', 'bob'], 3, sealWith(old));
      await createItems(db, rows);
      const rewritten = rotated.seal({ plaintext: 'rewritten', context: contextOf({ owner: 'ann', seq: 1, label: 'label-1' }) });
      const racing = beforeFirstTransaction(db, async () => {
        await db.knex(TABLE).where({ owner: 'ann', seq: 1 }).update({ sealed: rewritten });
      });

      expect(await reseal(racing)).toBe(5);
      const after = await readItems(db);
      expect(after.find((row) => row.owner === 'ann' && row.seq === 1)?.sealed).toBe(rewritten);
      for (const row of after.filter((candidate) => candidate.sealed !== rewritten)) {
        expect(newOnly.open({ sealed: row.sealed as string, context: contextOf(row) })).toBe(plaintextOf(row));
      }
    } finally {
      await cleanup();
    }
  });

  it('reseals every value that opens, then throws naming the rows whose value does not (without plaintext or sealed value)', async () => {
    const { db, cleanup } = await create();
    try {
      const lost = sealWith(createAesGcmSecretBox({ masterKey: lostKey }));
      // 6 values under a key no longer configured, 1 moved from another row (its context does not match), 593 old ones.
      const rows = itemsOf(['ann', 'bob'], 300, (row) => (row.owner === 'bob' && row.seq >= 294 ? lost(row) : sealWith(old)(row)));
      const moved = rows.find((row) => row.owner === 'ann' && row.seq === 7) as Item;
      moved.sealed = sealWith(old)({ owner: 'ann', seq: 8, label: 'label-1' });
      await createItems(db, rows);
      const unopened = rows.filter((row) => row === moved || (row.owner === 'bob' && row.seq >= 294));

      const error = await reseal(db).then(
        () => expect.unreachable('the reseal should fail'),
        (thrown: unknown) => thrown,
      );
      expect(error).toBeInstanceOf(UnopenedSealedValuesError);
      const failure = error as UnopenedSealedValuesError;
      expect(failure.count).toBe(7);
      expect(failure.message).toMatch(
        /^7 sealed value\(s\) could not be opened and were left as they are: reseal_items \(ann, 7\): .*authentication/,
      );
      expect(failure.rows).toHaveLength(5);
      expect(failure.rows.slice(1).map((row) => row.split(':')[0])).toEqual([
        'reseal_items (bob, 294)',
        'reseal_items (bob, 295)',
        'reseal_items (bob, 296)',
        'reseal_items (bob, 297)',
      ]);
      expect(failure.rows[1]).toMatch(/not configured/);
      for (const row of unopened) {
        expect(failure.message).not.toContain(row.sealed);
        expect(failure.message).not.toContain(plaintextOf(row));
      }

      const after = await readItems(db);
      for (const [index, row] of after.entries()) {
        if (unopened.includes(rows[index] as Item)) expect(row.sealed).toBe(rows[index]?.sealed);
        else expect(newOnly.open({ sealed: row.sealed as string, context: contextOf(row) })).toBe(plaintextOf(row));
      }
    } finally {
      await cleanup();
    }
  });

  it('stops at the next page once the signal aborts, keeping the pages done', async () => {
    const { db, cleanup } = await create();
    try {
      await createItems(db, itemsOf(['ann', 'bob', 'cyd'], 400, sealWith(old)));
      const controller = new AbortController();
      const aborting = beforeFirstTransaction(db, async () => controller.abort(new Error('shutting down')));

      await expect(reseal(aborting, controller.signal)).rejects.toThrow('shutting down');
      const after = await readItems(db);
      expect(after.filter((row) => !rotated.needsReseal(row.sealed as string))).toHaveLength(500);
      expect(after.slice(0, 500).every((row) => !rotated.needsReseal(row.sealed as string))).toBe(true);
      expect(await reseal(db)).toBe(700);
    } finally {
      await cleanup();
    }
  });
});
