import type { SecretBox, SqlDatabase } from '@agentinfra/core';
import { accountKeyContext, certificateKeyContext } from './gateway-rows.js';

/** A gateway table holding SecretBox-sealed private keys in `key_sealed`. */
export type SealedKeyTable = 'gateway_accounts' | 'gateway_orders' | 'gateway_certificates';

/** A row as the reseal reads it: its primary key, what its context is built from, and the sealed key. */
export interface SealedKeyRow {
  /** The row's primary key value (directory URL, order id or host). */
  id: string;
  /** The SecretBox context the key was sealed with. */
  context: string;
  key_sealed: string;
}

/**
 * Per table: its primary key, the columns read (the primary key and what the
 * context is built from) and the context its keys are sealed with (see gateway-rows.ts).
 */
const TABLES: Record<SealedKeyTable, { primaryKey: string; columns: readonly string[]; context: (row: Record<string, string>) => string }> =
  {
    gateway_accounts: {
      primaryKey: 'directory_url',
      columns: ['directory_url'],
      context: (row) => accountKeyContext(row.directory_url as string),
    },
    gateway_orders: { primaryKey: 'order_id', columns: ['order_id'], context: (row) => certificateKeyContext(row.order_id as string) },
    gateway_certificates: {
      primaryKey: 'host',
      columns: ['host', 'order_id'],
      context: (row) => certificateKeyContext(row.order_id as string),
    },
  };

/** Rows read per page (and resealed per transaction) while walking a table. */
const PAGE_SIZE = 500;
/** Rows named in the error about values that could not be opened. */
const UNREADABLE_SHOWN = 5;

/** How many keys one run resealed, per table. */
export interface ResealCounts {
  accounts: number;
  orders: number;
  certificates: number;
}

/**
 * Re-encryption of the gateway's private keys after a master-key rotation:
 * the ACME account keys, the certificate keys of orders and those of stored
 * certificates. Values sealed under an older key version
 * (`SecretBox.needsReseal`) are opened and sealed again under the current
 * key with the context they were sealed with (directory URL, order id).
 */
export function createKeyReseal(deps: { sql: SqlDatabase; secretBox: SecretBox }) {
  const knex = () => deps.sql.knex;

  /**
   * Reseals the rows of a snapshot of `table` that need it. A row is
   * updated only while it still holds the sealed value read, so a key
   * written meanwhile (a renewed certificate, a new order key, a
   * re-registered account) is kept.
   * @returns how many rows were resealed, and the rows whose value did not open (left as they are).
   */
  async function resealRows(table: SealedKeyTable, rows: readonly SealedKeyRow[]): Promise<{ resealed: number; unreadable: string[] }> {
    const { primaryKey } = TABLES[table];
    const updates: Array<SealedKeyRow & { resealed: string }> = [];
    const unreadable: string[] = [];
    for (const row of rows) {
      if (!deps.secretBox.needsReseal(row.key_sealed)) continue;
      try {
        const plaintext = deps.secretBox.open({ sealed: row.key_sealed, context: row.context });
        updates.push({ ...row, resealed: deps.secretBox.seal({ plaintext, context: row.context }) });
      } catch (error) {
        unreadable.push(`${table} ${row.id}: ${(error as Error).message}`);
      }
    }
    let resealed = 0;
    if (updates.length > 0) {
      await knex().transaction(async (trx) => {
        for (const update of updates) {
          resealed += await trx(table)
            .where({ [primaryKey]: update.id, key_sealed: update.key_sealed })
            .update({ key_sealed: update.resealed });
        }
      });
    }
    return { resealed, unreadable };
  }

  /** The next page of `table`'s sealed keys after primary key `after`. */
  async function page(table: SealedKeyTable, after: string | null): Promise<SealedKeyRow[]> {
    const { primaryKey, columns, context } = TABLES[table];
    const query = knex()(table)
      .select([...columns, 'key_sealed'])
      .whereNotNull('key_sealed')
      .orderBy(primaryKey)
      .limit(PAGE_SIZE);
    if (after !== null) query.where(primaryKey, '>', after);
    const rows = (await query) as Array<Record<string, string>>;
    return rows.map((row) => ({ id: row[primaryKey] as string, context: context(row), key_sealed: row.key_sealed as string }));
  }

  return {
    resealRows,

    /**
     * Walks the account, order and certificate tables ({@link PAGE_SIZE}
     * rows at a time) and reseals every key sealed under an older master
     * key. Idempotent; stops between pages when `signal` aborts.
     * @returns how many keys were resealed, per table.
     * @throws Error after the walk when some values could not be opened (their key version is no
     *   longer configured, or they were tampered with); the others are resealed all the same.
     */
    async resealAll(options: { signal?: AbortSignal } = {}): Promise<ResealCounts> {
      const counts = { gateway_accounts: 0, gateway_orders: 0, gateway_certificates: 0 };
      const unreadable: string[] = [];
      for (const table of Object.keys(counts) as SealedKeyTable[]) {
        let after: string | null = null;
        for (;;) {
          options.signal?.throwIfAborted();
          const rows = await page(table, after);
          const result = await resealRows(table, rows);
          counts[table] += result.resealed;
          unreadable.push(...result.unreadable);
          const last = rows.at(-1);
          if (!last || rows.length < PAGE_SIZE) break;
          after = last.id;
        }
      }
      if (unreadable.length > 0) {
        throw new Error(
          `${unreadable.length} gateway key(s) could not be opened and were left as they are: ${unreadable.slice(0, UNREADABLE_SHOWN).join('; ')}`,
        );
      }
      return { accounts: counts.gateway_accounts, orders: counts.gateway_orders, certificates: counts.gateway_certificates };
    },
  };
}
