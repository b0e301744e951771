import type { SecretBox, SqlDatabase } from '@agentinfra/core';
import { presharedKeyContext } from './preshared-keys.js';

/** A stored PSK as the reseal reads it: the pair (canonical order) and its sealed key. */
export interface SealedPskRow {
  agent_a: string;
  agent_b: string;
  sealed: string;
}

/** Rows read per page (and resealed per transaction) while walking `mesh_psks`. */
const PAGE_SIZE = 500;
/** Pairs named in the error about values that could not be opened. */
const UNREADABLE_SHOWN = 5;

/**
 * Re-encryption of the pairwise PSKs after a master-key rotation: values
 * sealed under an older key version (`SecretBox.needsReseal`) are opened
 * and sealed again under the current key, with the same context (the pair).
 */
export function createPskReseal(deps: { sql: SqlDatabase; secretBox: SecretBox }) {
  const knex = () => deps.sql.knex;

  /**
   * Reseals the rows of a snapshot that need it. A row is updated only
   * while it still holds the sealed value read, so a PSK rotated meanwhile
   * keeps its new key.
   * @returns how many rows were resealed, and the pairs whose value did not open (left as they are).
   */
  async function resealRows(rows: readonly SealedPskRow[]): Promise<{ resealed: number; unreadable: string[] }> {
    const updates: Array<SealedPskRow & { resealed: string }> = [];
    const unreadable: string[] = [];
    for (const row of rows) {
      if (!deps.secretBox.needsReseal(row.sealed)) continue;
      const context = presharedKeyContext({ a: row.agent_a, b: row.agent_b });
      try {
        const plaintext = deps.secretBox.open({ sealed: row.sealed, context });
        updates.push({ ...row, resealed: deps.secretBox.seal({ plaintext, context }) });
      } catch (error) {
        unreadable.push(`(${row.agent_a}, ${row.agent_b}): ${(error as Error).message}`);
      }
    }
    let resealed = 0;
    if (updates.length > 0) {
      await knex().transaction(async (trx) => {
        for (const update of updates) {
          resealed += await trx('mesh_psks')
            .where({ agent_a: update.agent_a, agent_b: update.agent_b, sealed: update.sealed })
            .update({ sealed: update.resealed });
        }
      });
    }
    return { resealed, unreadable };
  }

  return {
    resealRows,

    /**
     * Walks every PSK (by pair, {@link PAGE_SIZE} at a time) and reseals
     * those sealed under an older master key. Idempotent; stops between
     * pages when `signal` aborts.
     * @returns how many PSKs were resealed.
     * @throws Error after the walk when some values could not be opened (their key version is no
     *   longer configured, or they were tampered with); the others are resealed all the same.
     */
    async resealAll(options: { signal?: AbortSignal } = {}): Promise<number> {
      let resealed = 0;
      const unreadable: string[] = [];
      let after: { a: string; b: string } | null = null;
      for (;;) {
        options.signal?.throwIfAborted();
        const query = knex()('mesh_psks').select('agent_a', 'agent_b', 'sealed').orderBy(['agent_a', 'agent_b']).limit(PAGE_SIZE);
        if (after) {
          const { a, b } = after;
          query.where((where) => where.where('agent_a', '>', a).orWhere((same) => same.where('agent_a', a).andWhere('agent_b', '>', b)));
        }
        const page = (await query) as SealedPskRow[];
        const result = await resealRows(page);
        resealed += result.resealed;
        unreadable.push(...result.unreadable);
        const last = page.at(-1);
        if (!last || page.length < PAGE_SIZE) break;
        after = { a: last.agent_a, b: last.agent_b };
      }
      if (unreadable.length > 0) {
        throw new Error(
          `${unreadable.length} mesh PSK(s) could not be opened and were left as they are: ${unreadable.slice(0, UNREADABLE_SHOWN).join('; ')}`,
        );
      }
      return resealed;
    },
  };
}
