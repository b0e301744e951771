import { resealSealedColumn, type SecretBox, type SqlDatabase } from '@agentinfra/core';
import { presharedKeyContext } from './preshared-keys.js';

/**
 * Re-encryption of the pairwise PSKs after a master-key rotation: values
 * sealed under an older key version (`SecretBox.needsReseal`) are opened
 * and sealed again under the current key, with the same context (the pair).
 */
export function createPskReseal(deps: { sql: SqlDatabase; secretBox: SecretBox }) {
  return {
    /**
     * Walks every PSK by pair (see `resealSealedColumn`) and reseals those
     * sealed under an older master key; a PSK rotated meanwhile keeps its new
     * key. Idempotent; stops between pages when `signal` aborts.
     * @returns how many PSKs were resealed.
     * @throws UnopenedSealedValuesError after the walk when some values could not be opened (their key version is
     *   no longer configured, or they were tampered with), naming the pairs; the others are resealed all the same.
     */
    resealAll(options: { signal?: AbortSignal } = {}): Promise<number> {
      return resealSealedColumn({
        sql: deps.sql,
        secretBox: deps.secretBox,
        table: 'mesh_psks',
        keyColumns: ['agent_a', 'agent_b'],
        sealedColumn: 'sealed',
        contextOf: (row: { agent_a: string; agent_b: string }) => presharedKeyContext({ a: row.agent_a, b: row.agent_b }),
        what: 'mesh PSK',
        signal: options.signal,
      });
    },
  };
}
