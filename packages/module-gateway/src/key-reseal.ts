import {
  type ResealSealedColumnOptions,
  resealSealedColumn,
  type SecretBox,
  type SqlDatabase,
  UnopenedSealedValuesError,
} from '@agentinfra/core';
import { accountKeyContext, certificateKeyContext } from './gateway-rows.js';

/** How many keys one run resealed, per table. */
export interface ResealCounts {
  accounts: number;
  orders: number;
  certificates: number;
  revocations: number;
}

/** What every table's walk shares: the ports, the name of the values and the abort signal. */
type SharedOptions = Pick<ResealSealedColumnOptions<object>, 'sql' | 'secretBox' | 'what' | 'signal'>;

/**
 * The walk of each table holding sealed private keys in `key_sealed`, in the
 * order they run, with the context its keys are sealed with (see gateway-rows.ts).
 */
const TABLES: ReadonlyArray<readonly [keyof ResealCounts, (shared: SharedOptions) => Promise<number>]> = [
  [
    'accounts',
    (shared) =>
      resealSealedColumn({
        ...shared,
        table: 'gateway_accounts',
        keyColumns: ['directory_url'],
        sealedColumn: 'key_sealed',
        contextOf: (row: { directory_url: string }) => accountKeyContext(row.directory_url),
      }),
  ],
  [
    'orders',
    (shared) =>
      resealSealedColumn({
        ...shared,
        table: 'gateway_orders',
        keyColumns: ['order_id'],
        sealedColumn: 'key_sealed',
        contextOf: (row: { order_id: string }) => certificateKeyContext(row.order_id),
      }),
  ],
  [
    'certificates',
    (shared) =>
      resealSealedColumn({
        ...shared,
        table: 'gateway_certificates',
        keyColumns: ['host'],
        sealedColumn: 'key_sealed',
        extraColumns: ['order_id'],
        contextOf: (row: { host: string; order_id: string }) => certificateKeyContext(row.order_id),
      }),
  ],
  [
    'revocations',
    (shared) =>
      resealSealedColumn({
        ...shared,
        table: 'gateway_revocations',
        keyColumns: ['revocation_id'],
        sealedColumn: 'key_sealed',
        extraColumns: ['order_id'],
        contextOf: (row: { revocation_id: string; order_id: string }) => certificateKeyContext(row.order_id),
      }),
  ],
];

/**
 * Re-encryption of the gateway's private keys after a master-key rotation:
 * the ACME account keys, the certificate keys of orders, of stored
 * certificates and of pending revocations. Values sealed under an older key version
 * (`SecretBox.needsReseal`) are opened and sealed again under the current
 * key with the context they were sealed with (directory URL, order id).
 */
export function createKeyReseal(deps: { sql: SqlDatabase; secretBox: SecretBox }) {
  return {
    /**
     * Walks the account, order, certificate and revocation tables (see
     * `resealSealedColumn`) and reseals every key sealed under an older
     * master key; a key written meanwhile (a renewed certificate, a new order
     * key, a re-registered account) is kept. Idempotent; stops between pages
     * when `signal` aborts.
     * @returns how many keys were resealed, per table.
     * @throws UnopenedSealedValuesError after the walk of all four tables when some values could not be opened
     *   (their key version is no longer configured, or they were tampered with), naming up to 5 rows; the others
     *   are resealed all the same.
     */
    async resealAll(options: { signal?: AbortSignal } = {}): Promise<ResealCounts> {
      const shared: SharedOptions = { sql: deps.sql, secretBox: deps.secretBox, what: 'gateway key', signal: options.signal };
      const counts: ResealCounts = { accounts: 0, orders: 0, certificates: 0, revocations: 0 };
      const unopened: UnopenedSealedValuesError[] = [];
      for (const [count, reseal] of TABLES) {
        try {
          counts[count] = await reseal(shared);
        } catch (error) {
          if (!(error instanceof UnopenedSealedValuesError)) throw error;
          unopened.push(error);
        }
      }
      if (unopened.length > 0) {
        throw new UnopenedSealedValuesError({
          what: 'gateway key',
          count: unopened.reduce((sum, error) => sum + error.count, 0),
          rows: unopened.flatMap((error) => error.rows),
        });
      }
      return counts;
    },
  };
}
