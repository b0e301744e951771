import type { LexicalHit, LexicalIndex, LexicalSource, VectorAttach } from '@agentinfra/core';
import {
  attachedRow,
  attachSql,
  createCommonTerms,
  filterVisibilityKeys,
  knexOptionSchema,
  lexicalSourceOptionSchema,
  lexicalTerms,
  MAX_LEXICAL_POSTINGS,
  nextIoTurn,
  selectiveTerms,
} from '@agentinfra/core';
import type BetterSqlite3 from 'better-sqlite3';
import { z } from 'zod';
import { withConnection } from './connection-lease.js';
import { LEXICAL_FLUSH_BATCH, LEXICAL_FLUSH_CHARS, lexicalQueueOn } from './lexical-queue.js';
import { createSqliteLexicalTables, keysExpression, type SqliteLexicalTables, sqliteLexicalTables } from './lexical-tables.js';
import { indexedText, recordTextForm } from './lexical-text-form.js';

/** Source rows indexed per transaction while `ensure` builds the index of an existing table. */
const BACKFILL_BATCH = 2_000;

/** Milliseconds between two flushes of the queue while less than a batch waits in it. */
export const LEXICAL_FLUSH_INTERVAL_MS = 100;

/** Options of {@link createSqliteLexicalIndex}. */
export const sqliteLexicalIndexOptions = z.object({
  /** A knex on better-sqlite3 (the adapter's, whose pool holds one connection). */
  knex: knexOptionSchema,
  /** Name prefix of the index's tables and triggers, e.g. `memory_lexical`. */
  table: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]{0,47}$/, 'table must be a plain identifier of at most 48 characters'),
  source: lexicalSourceOptionSchema,
});
export type SqliteLexicalIndexOptions = z.input<typeof sqliteLexicalIndexOptions>;

/** A {@link LexicalIndex} on SQLite, with the background flush of its queue to stop. */
export interface SqliteLexicalIndex extends LexicalIndex {
  /** Stops the background flush (the database is closing); queued rows stay queued for the next start. */
  close(): void;
}

/** A row of a lexical query: FTS5's bm25 (negative, lower is better) and any attached columns. */
type RankedRow = { id: string; rank: number } & Record<string, unknown>;

/**
 * {@link LexicalIndex} on SQLite's FTS5 ({@link SqliteLexicalTables}): a
 * contentless FTS5 table with the `porter` stemmer over each row's text in
 * NFKC (the form of a query's words, `lexicalTerms`), kept in step with the
 * source table by triggers. A deleted row leaves the index in its own
 * transaction; an inserted or changed row is queued in its own transaction
 * and indexed in batches of at most {@link LEXICAL_FLUSH_BATCH} rows and
 * {@link LEXICAL_FLUSH_CHARS} characters: every
 * {@link LEXICAL_FLUSH_INTERVAL_MS} ms in the background once `ensure` has
 * run, and before every query and count, which index the rows queued when
 * they start (batch by batch, the event loop polling I/O in between), so a
 * committed write is always found by the next query. (FTS5 writes a segment at every commit; one per
 * batch instead of one per write halves the index's cost per row, see
 * bench/RESULTS.md.) A query first counts each word's matching rows
 * (stopping past `MAX_LEXICAL_POSTINGS`; words counted past it a minute
 * ago are not counted again, see `CommonTerms`) and keeps the rarest words within
 * that budget (`selectiveTerms`), then runs one statement: the FTS5 match
 * (the kept words joined with OR), the visibility filter on each match's
 * keys, ordered by BM25 (FTS5's `bm25()`, k1 = 1.2, b = 0.75; its IDF is
 * still computed over the whole index) and limited to `k`; `score` is
 * −bm25, so higher is better.
 *
 * @throws ZodError when options are invalid; RangeError when a source name is not a plain identifier.
 *   Methods throw an Error with the driver error as `cause` when SQLite fails.
 */
export function createSqliteLexicalIndex(options: SqliteLexicalIndexOptions): SqliteLexicalIndex {
  const { knex, table, source } = sqliteLexicalIndexOptions.parse(options);
  const tables = sqliteLexicalTables(table, source as LexicalSource);
  const commonTerms = createCommonTerms();
  let flushTimer: NodeJS.Timeout | undefined;
  let closed = false;

  /** Flushes one batch after `delayMs`, then schedules the next (at once while batches come back full). */
  function scheduleFlush(delayMs: number): void {
    if (closed || flushTimer !== undefined) return;
    flushTimer = setTimeout(async () => {
      let full = false;
      try {
        full = (await withConnection(knex, (db) => lexicalQueueOn(db, tables).flushBatch())).full;
      } catch {
        // Left queued: the next flush retries, and queries drain the queue themselves and report what fails.
      }
      flushTimer = undefined;
      scheduleFlush(full ? 0 : LEXICAL_FLUSH_INTERVAL_MS);
    }, delayMs);
    flushTimer.unref();
  }

  /**
   * Indexes the rows queued now, one batch per connection lease with a turn
   * for I/O between batches; rows queued meanwhile are left to the
   * background flush, so a stream of writes cannot keep a query waiting.
   */
  async function indexQueued(): Promise<void> {
    const keys = await withConnection(knex, (db) => lexicalQueueOn(db, tables).queuedKeys());
    // A window of one batch per lease: slicing the rest of a large backlog after every batch would copy it each time.
    for (let offset = 0; offset < keys.length; ) {
      const window = keys.slice(offset, offset + LEXICAL_FLUSH_BATCH);
      offset += await withConnection(knex, (db) => lexicalQueueOn(db, tables).flushKeys(window));
      if (offset < keys.length) await nextIoTurn();
    }
    scheduleFlush(LEXICAL_FLUSH_INTERVAL_MS);
  }

  async function attempt<T>(operation: string, work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      if (error instanceof RangeError) throw error;
      throw new Error(`sqlite lexical index ${table}: ${operation} failed: ${(error as Error).message}`, { cause: error });
    }
  }

  /** How many rows match each of `terms`, counting each no further than the postings budget allows. */
  function matchCounts(db: BetterSqlite3.Database, terms: readonly string[]): number[] {
    const count = db.prepare(
      `select count(*) as n from (select rowid from ${tables.fts} where ${tables.fts} match ? limit ${MAX_LEXICAL_POSTINGS + 1})`,
    );
    return terms.map((term) => (count.get(`"${term}"`) as { n: number }).n);
  }

  /**
   * The best `k` matches of `match` visible under `keys`, by BM25, ties by id.
   * They are ranked first and only then joined with the attached columns, so
   * that attached rows (whole memories) are read for those `k` only, not for
   * every match the ranking sorts (up to `MAX_LEXICAL_POSTINGS`).
   */
  function search(db: BetterSqlite3.Database, match: string, keys: string[], k: number, attach?: VectorAttach): RankedRow[] {
    const attached = attach === undefined ? undefined : attachSql(attach, 'ranked.id');
    return db
      .prepare(
        `with ranked as materialized (
           select d.id as id, bm25(${tables.fts}) as rank
           from ${tables.fts} join ${tables.docs} d on d.rid = ${tables.fts}.rowid
           where ${tables.fts} match ?
             and exists (select 1 from json_each(d.keys) k where k.value in (select value from json_each(?)))
           order by rank, d.id limit ?
         )
         select ranked.id as id, ranked.rank as rank${attached === undefined ? '' : `, ${attached.select.join(', ')}`}
         from ranked ${attached?.join ?? ''}
         order by ranked.rank, ranked.id`,
      )
      .all(match, JSON.stringify(keys), k) as RankedRow[];
  }

  return {
    async ensure(request = {}) {
      const { onProgress } = request;
      await attempt('ensure', async () => {
        const building = await withConnection(knex, (db) => prepare(db, tables));
        if (building) await backfill();
        // One lease per batch, as the backfill: rows queued before a restart may be many.
        while ((await withConnection(knex, (db) => lexicalQueueOn(db, tables).flushBatch())).full);
        scheduleFlush(LEXICAL_FLUSH_INTERVAL_MS);
      });

      async function backfill(): Promise<void> {
        let { done, total } = await withConnection(knex, (db) => backfillOn(db, tables).start());
        onProgress?.(done, total);
        for (;;) {
          // One lease per batch: other statements run between batches of a long build.
          const walked = await withConnection(knex, (db) => backfillOn(db, tables).step());
          if (walked === 0) return;
          done += walked;
          total = Math.max(total, done);
          onProgress?.(done, total);
        }
      }
    },

    async query({ text, k, filter, attach }) {
      if (!Number.isInteger(k) || k < 0) throw new RangeError(`k must be a non-negative integer, got ${k}`);
      if (attach !== undefined) attachSql(attach, 'd.id');
      const terms = lexicalTerms(text);
      const keys = filterVisibilityKeys(filter);
      if (k === 0 || terms.length === 0 || keys.length === 0) return [];
      return attempt('query', async () => {
        // A read answers even when the queue cannot be indexed now (a full disk): rows still queued are missed by this
        // leg only, and a later flush indexes them.
        await indexQueued().catch(() => undefined);
        return withConnection(knex, (db) => {
          const kept = selectiveTerms(
            terms,
            commonTerms.counts(terms, (unknown) => matchCounts(db, unknown)),
          );
          if (kept.length === 0) return [];
          const match = kept.map((term) => `"${term}"`).join(' OR ');
          return search(db, match, keys, k, attach).map((row) => {
            const hit: LexicalHit = { id: row.id, score: -row.rank };
            const attached = attachedRow(row);
            if (attached !== undefined) hit.row = attached;
            return hit;
          });
        });
      });
    },

    async count() {
      return attempt('count', async () => {
        await indexQueued();
        return withConnection(knex, (db) => Number((db.prepare(`select count(*) as n from ${tables.docs}`).get() as { n: number }).n));
      });
    },

    close() {
      closed = true;
      clearTimeout(flushTimer);
    },
  };
}

/**
 * Creates what is missing in one transaction; when the source's triggers were
 * missing (a new index, or a source table dropped and created again), empties
 * the index so the backfill rebuilds it from the source; when the index
 * predates NFKC text, has the backfill walk it again ({@link recordTextForm}).
 * @returns whether a backfill must run (the index is not `ready`).
 */
function prepare(db: BetterSqlite3.Database, tables: SqliteLexicalTables): boolean {
  return db
    .transaction(() => {
      if (createSqliteLexicalTables(db, tables)) {
        db.exec(`insert into ${tables.fts} (${tables.fts}) values ('delete-all')`);
        db.exec(`delete from ${tables.docs}`);
        db.exec(`delete from ${tables.queue}`);
        db.exec(`delete from ${tables.meta}`);
      }
      recordTextForm(db, tables);
      const state = db.prepare(`select value from ${tables.meta} where key = 'state'`).get() as { value: string } | undefined;
      return state?.value !== 'ready';
    })
    .immediate();
}

/** Statements of the backfill, prepared on one connection. */
interface Backfill {
  /** Source rows to index and the total, with the stored cursor. */
  start(): { done: number; total: number };
  /** Indexes the next batch in one transaction. @returns rows walked (0 once finished, when the state becomes `ready`). */
  step(): number;
}

/**
 * The backfill of the source rows the triggers have not seen (those written
 * before the index existed), in key order, {@link BACKFILL_BATCH} per
 * transaction; the last key done is stored with each batch, so an
 * interrupted build resumes there. Rows already indexed (by the queue
 * meanwhile, or before an upgrade) keep their doc; those whose text NFKC
 * changes have it indexed again in NFKC ({@link indexedText}), which upgrades an index
 * built before text was normalised.
 */
function backfillOn(db: BetterSqlite3.Database, tables: SqliteLexicalTables): Backfill {
  const { source } = tables;
  const count = (condition: string, ...bindings: unknown[]) =>
    Number(
      (db.prepare(`select count(*) as n from ${source.table} s where ${source.only('s')}${condition}`).get(...bindings) as { n: number }).n,
    );
  const readCursor = () =>
    (db.prepare(`select value from ${tables.meta} where key = 'cursor'`).get() as { value: string } | undefined)?.value ?? null;
  const batch = db.prepare(
    `select s.${source.key} as id, s.${source.text} as text, ${keysExpression(tables, 's')} as keys
     from ${source.table} s where ${source.only('s')} and (? is null or s.${source.key} > ?)
     order by s.${source.key} limit ?`,
  );
  const indexedDoc = db.prepare(`select rid from ${tables.docs} where id = ?`).pluck();
  const insertDoc = db.prepare(`insert into ${tables.docs} (id, keys) values (?, ?)`);
  const removeText = db.prepare(`delete from ${tables.fts} where rowid = ?`);
  const insertText = db.prepare(`insert into ${tables.fts} (rowid, text) values (?, ?)`);
  const save = db.prepare(`insert or replace into ${tables.meta} (key, value) values (?, ?)`);
  return {
    start() {
      const cursor = readCursor();
      return { done: cursor === null ? 0 : count(` and s.${source.key} <= ?`, cursor), total: count('') };
    },
    step() {
      return db
        .transaction(() => {
          const cursor = readCursor();
          const rows = batch.all(cursor, cursor, BACKFILL_BATCH) as Array<{ id: string; text: string; keys: string }>;
          for (const row of rows) {
            const text = indexedText(row.text);
            const rid = indexedDoc.get(row.id) as number | undefined;
            if (rid === undefined) {
              insertText.run(insertDoc.run(row.id, row.keys).lastInsertRowid, text);
            } else if (text !== row.text) {
              removeText.run(rid);
              insertText.run(rid, text);
            }
          }
          const last = rows[rows.length - 1];
          if (last === undefined) save.run('state', 'ready');
          else save.run('cursor', last.id);
          return rows.length;
        })
        .immediate();
    },
  };
}
