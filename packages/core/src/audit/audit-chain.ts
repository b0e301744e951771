import { createHash } from 'node:crypto';

/** `prev_hash` of the first row ever appended: 64 zeros. */
export const GENESIS_HASH = '0'.repeat(64);

/** One row of `core_audit` as stored (times in ms since the epoch, `detail` as JSON text). */
export interface AuditRow {
  seq: number;
  id: string;
  at: number;
  actor_kind: string;
  actor_id: string | null;
  actor_agent: string | null;
  agent_id: string | null;
  action: string;
  target: string | null;
  outcome: string;
  client: string | null;
  request_id: string | null;
  detail: string | null;
  prev_hash: string;
  hash: string;
}

/**
 * The hash that chains a row to its predecessor: hex SHA-256 of
 * `prev_hash`, a newline, and the JSON array of every other column in a
 * fixed order. Editing any column of a row, or removing a row, changes what
 * its successor should hold, so `verify` finds the break.
 */
export function chainHash(row: Omit<AuditRow, 'hash'>): string {
  const fields = [
    row.seq,
    row.id,
    row.at,
    row.actor_kind,
    row.actor_id,
    row.actor_agent,
    row.agent_id,
    row.action,
    row.target,
    row.outcome,
    row.client,
    row.request_id,
    row.detail,
  ];
  return createHash('sha256')
    .update(`${row.prev_hash}\n${JSON.stringify(fields)}`, 'utf8')
    .digest('hex');
}

/** Where the chain breaks: the row (by `seq`) and what is wrong with it. */
export interface ChainBreak {
  seq: number;
  reason: string;
}

/**
 * Walks rows in `seq` order and checks each against its predecessor.
 * Feed it pages with {@link ChainWalker.check}; {@link ChainWalker.finish}
 * compares the last row with the recorded head.
 */
export interface ChainWalker {
  /** Checks the next rows (ascending `seq`). @returns the first break, or null. */
  check(rows: readonly AuditRow[]): ChainBreak | null;
  /** Checks that the walk ended at the head (`seq` and `hash` of the newest row). @returns the break, or null. */
  finish(head: { seq: number; hash: string }): ChainBreak | null;
  /** Rows checked so far. */
  readonly checked: number;
}

/**
 * A walker starting after the anchor: the seq and hash of the last row the
 * retention sweep removed (0 and {@link GENESIS_HASH} when none was).
 */
export function createChainWalker(anchor: { seq: number; hash: string }): ChainWalker {
  let previous = { seq: anchor.seq, hash: anchor.hash };
  let checked = 0;
  return {
    get checked() {
      return checked;
    },
    check(rows) {
      for (const row of rows) {
        if (row.seq !== previous.seq + 1) {
          return { seq: previous.seq + 1, reason: `row ${previous.seq + 1} is missing (next row is ${row.seq})` };
        }
        if (row.prev_hash !== previous.hash) return { seq: row.seq, reason: 'prev_hash does not match the previous row' };
        if (chainHash(row) !== row.hash) return { seq: row.seq, reason: 'hash does not match the row (the row was edited)' };
        previous = { seq: row.seq, hash: row.hash };
        checked += 1;
      }
      return null;
    },
    finish(head) {
      if (previous.seq < head.seq) return { seq: previous.seq + 1, reason: `rows ${previous.seq + 1}..${head.seq} are missing` };
      if (previous.seq > head.seq || previous.hash !== head.hash) {
        return { seq: previous.seq, reason: 'the newest row does not match the recorded head' };
      }
      return null;
    },
  };
}
