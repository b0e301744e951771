import type { Knex } from 'knex';
import type { SecretBox } from '../ports/secret-box.js';
import type { SqlDatabase } from '../ports/sql-database.js';

/** Rows read per page, and resealed per transaction. */
const PAGE_SIZE = 500;
/** Rows named in the message of {@link UnopenedSealedValuesError}. */
const ROWS_SHOWN = 5;

/** A column name of `Row`. */
type ColumnOf<Row> = keyof Row & string;

/** Options of {@link resealSealedColumn}; `Row` is the shape `contextOf` reads (key and extra columns). */
export interface ResealSealedColumnOptions<Row extends object> {
  sql: SqlDatabase;
  /** Opens the old values (their key version must still be configured) and seals again under its current key. */
  secretBox: SecretBox;
  table: string;
  /** The table's primary key, one column or more, in index order: the walk goes through the rows in this order. */
  keyColumns: readonly [ColumnOf<Row>, ...ColumnOf<Row>[]];
  /** The text column holding `SecretBox.seal` output; rows where it is NULL are skipped. */
  sealedColumn: string;
  /** Other columns `contextOf` reads, besides the key columns. */
  extraColumns?: readonly ColumnOf<Row>[];
  /**
   * The `context` the row's value was sealed with: the AES-GCM additional
   * authenticated data binding the value to its row (e.g.
   * `identity.secret\0<agent>\0<key>`). A wrong context makes the value fail
   * to open, so it must be exactly what the writer passed to `SecretBox.seal`.
   */
  contextOf(row: Row): string;
  /** What the values are, in the error message (e.g. `mesh PSK`); default `sealed value`. */
  what?: string;
  /** Checked before each page: once aborted, the walk stops there with `signal.reason`. */
  signal?: AbortSignal;
}

/**
 * Thrown when sealed values could not be opened (their key version is no
 * longer configured, or they fail authentication) and were left as they are.
 * Names rows by primary key, never by plaintext or sealed value.
 */
export class UnopenedSealedValuesError extends Error {
  /** How many values did not open. */
  readonly count: number;
  /** Up to 5 rows, each `<table> <key>: <reason>` (a composite key as `(a, b)`). */
  readonly rows: readonly string[];

  /** @param options.rows rows as in {@link UnopenedSealedValuesError.rows}; only the first 5 are kept. */
  constructor(options: { what: string; count: number; rows: readonly string[] }) {
    const rows = options.rows.slice(0, ROWS_SHOWN);
    super(`${options.count} ${options.what}(s) could not be opened and were left as they are: ${rows.join('; ')}`);
    this.name = 'UnopenedSealedValuesError';
    this.count = options.count;
    this.rows = rows;
  }
}

/**
 * Finishes a master-key rotation for one column: every value of
 * `table.sealedColumn` that `SecretBox.needsReseal` says was sealed under an
 * older key is opened and sealed again under the current key, with the same
 * context (`contextOf(row)`).
 *
 * The walk reads 500 rows at a time by keyset pagination on `keyColumns`
 * (the row-value comparison `(k1, k2, …) > (last row's key)`, on PostgreSQL
 * and SQLite alike), so every row present throughout the walk is visited
 * exactly once whatever is inserted or deleted meanwhile, and writes each
 * page's new values in one transaction. A row is updated only while it still holds the value read, so
 * a value rewritten meanwhile by its owner is kept as written. Idempotent:
 * a second run finds nothing to reseal.
 * @returns how many values were resealed.
 * @throws UnopenedSealedValuesError after the walk when some values did not open; every other value is resealed.
 * @throws `signal.reason` when `signal` aborts (the pages before it stay resealed), or the driver error of a
 *   failed query (that page's transaction is rolled back).
 */
export async function resealSealedColumn<Row extends object>(options: ResealSealedColumnOptions<Row>): Promise<number> {
  const { sql, secretBox, table, keyColumns, sealedColumn, signal } = options;
  const keyLabel = (row: Record<string, unknown>) =>
    keyColumns.length === 1 ? String(row[keyColumns[0]]) : `(${keyColumns.map((column) => String(row[column])).join(', ')})`;
  let resealed = 0;
  let unopened = 0;
  const unopenedRows: string[] = [];
  let after: Knex.Value[] | null = null;
  for (;;) {
    signal?.throwIfAborted();
    const query = sql
      .knex(table)
      .select([...keyColumns, ...(options.extraColumns ?? []), sealedColumn])
      .whereNotNull(sealedColumn)
      .orderBy([...keyColumns])
      .limit(PAGE_SIZE);
    if (after !== null) {
      const placeholders = (marker: string) => keyColumns.map(() => marker).join(', ');
      query.whereRaw(`(${placeholders('??')}) > (${placeholders('?')})`, [...keyColumns, ...after]);
    }
    const page = (await query) as Array<Record<string, unknown>>;
    const updates: Array<{ key: Record<string, unknown>; sealed: string; resealed: string }> = [];
    for (const row of page) {
      const sealed = row[sealedColumn] as string;
      if (!secretBox.needsReseal(sealed)) continue;
      const context = options.contextOf(row as Row);
      try {
        const plaintext = secretBox.open({ sealed, context });
        const key = Object.fromEntries(keyColumns.map((column) => [column, row[column]]));
        updates.push({ key, sealed, resealed: secretBox.seal({ plaintext, context }) });
      } catch (error) {
        unopened += 1;
        if (unopenedRows.length < ROWS_SHOWN) unopenedRows.push(`${table} ${keyLabel(row)}: ${(error as Error).message}`);
      }
    }
    if (updates.length > 0) {
      resealed += await sql.knex.transaction(async (trx) => {
        let written = 0;
        for (const update of updates) {
          written += await trx(table)
            .where(update.key)
            .andWhere(sealedColumn, update.sealed)
            .update({ [sealedColumn]: update.resealed });
        }
        return written;
      });
    }
    const last = page.at(-1);
    if (last === undefined || page.length < PAGE_SIZE) break;
    after = keyColumns.map((column) => last[column] as Knex.Value);
  }
  if (unopened > 0) throw new UnopenedSealedValuesError({ what: options.what ?? 'sealed value', count: unopened, rows: unopenedRows });
  return resealed;
}
