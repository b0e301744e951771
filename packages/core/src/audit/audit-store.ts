import type { Knex } from 'knex';
import { type AuditRow, type ChainBreak, chainHash, createChainWalker } from './audit-chain.js';

const EVENTS = 'core_audit';
const STATE = 'core_audit_state';
/** Rows per insert statement (13 bound values each, well under SQLite's 32 766). */
const INSERT_CHUNK = 200;
/** Rows read per page while verifying. */
const VERIFY_PAGE = 2_000;
/** Rows removed per transaction by the retention sweep. */
const SWEEP_BATCH = 5_000;

/** A row before it is chained: everything but `seq`, `prev_hash` and `hash`. */
export type UnchainedRow = Omit<AuditRow, 'seq' | 'prev_hash' | 'hash'>;

interface StateRow {
  head_seq: number;
  head_hash: string;
  anchor_seq: number;
  anchor_hash: string;
}

/**
 * Takes the chain's lock for the rest of `trx` and reads the state row.
 * The first statement is an UPDATE of the single state row: on PostgreSQL
 * it takes that row's lock (so appends from every replica queue up, and the
 * SELECT after it sees the newest committed head under READ COMMITTED); on
 * SQLite it takes the database's write lock before anything is read, so a
 * second process can never read a stale head.
 */
async function lockState(trx: Knex.Transaction): Promise<StateRow> {
  await trx(STATE)
    .where({ id: 1 })
    .update({ head_seq: trx.ref('head_seq') });
  const state = (await trx(STATE).where({ id: 1 }).first('head_seq', 'head_hash', 'anchor_seq', 'anchor_hash')) as StateRow | undefined;
  if (!state) throw new Error('core_audit_state has no row: the core migrations did not run');
  return { ...state, head_seq: Number(state.head_seq), anchor_seq: Number(state.anchor_seq) };
}

/**
 * Appends rows at the head of the chain in one transaction, in order.
 * @returns the rows as stored (with `seq`, `prev_hash`, `hash`).
 */
export async function appendRows(knex: Knex, rows: readonly UnchainedRow[]): Promise<AuditRow[]> {
  return knex.transaction(async (trx) => {
    const state = await lockState(trx);
    let seq = state.head_seq;
    let hash = state.head_hash;
    const chained = rows.map((row) => {
      seq += 1;
      const unhashed = { ...row, seq, prev_hash: hash };
      hash = chainHash(unhashed);
      return { ...unhashed, hash };
    });
    for (let index = 0; index < chained.length; index += INSERT_CHUNK) {
      await trx(EVENTS).insert(chained.slice(index, index + INSERT_CHUNK));
    }
    await trx(STATE).where({ id: 1 }).update({ head_seq: seq, head_hash: hash });
    return chained;
  });
}

/** Filters of {@link listRows}; times in ms since the epoch. */
export interface AuditRowQuery {
  /** Events whose subject or acting agent is this agent. */
  agentId?: string;
  actions?: readonly string[];
  since?: number;
  until?: number;
  /** Only rows with a smaller `seq` (the cursor). */
  beforeSeq?: number;
  limit: number;
}

/** Newest first. */
export async function listRows(knex: Knex, query: AuditRowQuery): Promise<AuditRow[]> {
  const select = knex(EVENTS).select('*').orderBy('seq', 'desc').limit(query.limit);
  if (query.agentId !== undefined) {
    const agent = query.agentId;
    select.where((where) => where.where('agent_id', agent).orWhere('actor_agent', agent));
  }
  if (query.actions && query.actions.length > 0) select.whereIn('action', [...query.actions]);
  if (query.since !== undefined) select.where('at', '>=', query.since);
  if (query.until !== undefined) select.where('at', '<', query.until);
  if (query.beforeSeq !== undefined) select.where('seq', '<', query.beforeSeq);
  return ((await select) as AuditRow[]).map(normalise);
}

/** What {@link verifyChain} found. */
export interface ChainReport {
  ok: boolean;
  /** Rows checked. */
  checked: number;
  /** The newest row (`seq` 0 and the anchor's hash when the log is empty). */
  head: { seq: number; hash: string };
  /** The last row removed by retention (seq 0 when none was). */
  anchor: { seq: number; hash: string };
  /** The first break, when not ok. */
  problem?: ChainBreak;
}

/**
 * Walks the chain from the anchor to the head recorded when the walk began
 * (rows appended meanwhile are left for the next run).
 * @param onProgress called after each page with rows checked and rows to check.
 */
export async function verifyChain(knex: Knex, onProgress?: (checked: number, total: number) => void): Promise<ChainReport> {
  const raw = (await knex(STATE).where({ id: 1 }).first()) as StateRow | undefined;
  if (!raw) throw new Error('core_audit_state has no row: the core migrations did not run');
  const head = { seq: Number(raw.head_seq), hash: raw.head_hash };
  const anchor = { seq: Number(raw.anchor_seq), hash: raw.anchor_hash };
  const walker = createChainWalker(anchor);
  const total = Math.max(0, head.seq - anchor.seq);
  let after = anchor.seq;
  for (;;) {
    const page = (
      (await knex(EVENTS)
        .select('*')
        .where('seq', '>', after)
        .where('seq', '<=', head.seq)
        .orderBy('seq', 'asc')
        .limit(VERIFY_PAGE)) as AuditRow[]
    ).map(normalise);
    const problem = walker.check(page);
    if (problem) return { ok: false, checked: walker.checked, head, anchor, problem };
    onProgress?.(walker.checked, total);
    if (page.length < VERIFY_PAGE) break;
    after = (page[page.length - 1] as AuditRow).seq;
  }
  const problem = walker.finish(head);
  return problem ? { ok: false, checked: walker.checked, head, anchor, problem } : { ok: true, checked: walker.checked, head, anchor };
}

/**
 * Removes rows older than `before` (ms since the epoch), oldest first, in
 * batches. Each batch records the seq and hash of the last row it removed as
 * the anchor, so the remaining chain still verifies from there.
 * @returns rows removed.
 */
export async function sweepRows(knex: Knex, before: number): Promise<number> {
  let removed = 0;
  for (;;) {
    const batch = await knex.transaction(async (trx) => {
      const state = await lockState(trx);
      const last = (await trx(EVENTS)
        .select('seq', 'hash')
        .where('seq', '>', state.anchor_seq)
        .where('at', '<', before)
        .orderBy('seq', 'asc')
        .offset(SWEEP_BATCH - 1)
        .limit(1)
        .first()) as { seq: number; hash: string } | undefined;
      const cut =
        last ??
        ((await trx(EVENTS).select('seq', 'hash').where('at', '<', before).orderBy('seq', 'desc').first()) as
          | { seq: number; hash: string }
          | undefined);
      if (!cut || Number(cut.seq) <= state.anchor_seq) return 0;
      const count = await trx(EVENTS).where('seq', '<=', cut.seq).delete();
      await trx(STATE).where({ id: 1 }).update({ anchor_seq: cut.seq, anchor_hash: cut.hash });
      return count;
    });
    removed += batch;
    if (batch < SWEEP_BATCH) return removed;
  }
}

/** `bigInteger` columns as numbers (the SQL port guarantees it; this keeps the chain hash independent of drivers). */
function normalise(row: AuditRow): AuditRow {
  return { ...row, seq: Number(row.seq), at: Number(row.at) };
}
