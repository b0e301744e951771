import type { LexicalHit, LexicalIndex, LexicalSource } from '@agentinfra/core';
import {
  attachedRow,
  attachSql,
  createCommonTerms,
  filterVisibilityKeys,
  knexOptionSchema,
  lexicalSourceOptionSchema,
  lexicalTerms,
  MAX_LEXICAL_POSTINGS,
  selectiveTerms,
} from '@agentinfra/core';
import { z } from 'zod';
import { createPgLexicalTables, documentExpression, keysExpression, type PgLexicalTables, pgLexicalTables } from './lexical-tables.js';
import { recordTextForm } from './lexical-text-form.js';
import { queryPlannedEachTime } from './prepared-statement.js';

/** Source rows indexed per transaction while `ensure` builds the index of an existing table. */
const BACKFILL_BATCH = 1_000;

/** Options of {@link createPgLexicalIndex}. */
export const pgLexicalIndexOptions = z.object({
  /** A knex on pg; the index's objects go to the first schema of its `search_path`, where the source table must be. */
  knex: knexOptionSchema,
  /** Name prefix of the index's objects, e.g. `memory_lexical` (at most 40 characters, so derived names fit in 63). */
  table: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]{0,39}$/, 'table must be a plain identifier of at most 40 characters'),
  source: lexicalSourceOptionSchema,
});
export type PgLexicalIndexOptions = z.input<typeof pgLexicalIndexOptions>;

/** A row of a lexical query: its cover-density rank and any attached columns. */
type RankedRow = { id: string; score: number } & Record<string, unknown>;

/**
 * {@link LexicalIndex} on PostgreSQL full-text search ({@link PgLexicalTables}):
 * a `tsvector` per source row's text in NFKC (`english` configuration; NFKC
 * is the form of a query's words, `lexicalTerms`) with a GIN index,
 * visibility keys in a `text[]` with a GIN index, kept in step with the
 * source table by statement-level triggers, so the index changes in the
 * statement (and transaction) that changes the source rows — including the
 * data-modifying CTE with which the vector index stores records.
 *
 * A query first counts each word's matching rows in one statement (each
 * count stops past `MAX_LEXICAL_POSTINGS`; words counted past it a minute
 * ago are not counted again, see `CommonTerms`) and keeps the rarest words within
 * that budget (`selectiveTerms`), then runs one statement, planned for its values each time (`queryPlannedEachTime`):
 * `to_tsquery` of the kept words joined with `|`, the visibility filter (`keys && $keys`), ordered by
 * `ts_rank_cd(doc, query, 1)` (cover density, divided by 1 + log of the
 * document length) then id, limited to `k`, with any attached table joined.
 * `ts_rank_cd` has no inverse document frequency: it ranks how densely a row
 * holds the query's words, not how rare they are (measured on
 * bench/data/retrieval-set.json it fuses with the vector leg as well as
 * FTS5's BM25 does, bench/RESULTS.md).
 *
 * @throws ZodError when options are invalid; RangeError when a source name is not a plain identifier.
 *   Methods throw an Error with the driver error as `cause` when PostgreSQL fails.
 */
export function createPgLexicalIndex(options: PgLexicalIndexOptions): LexicalIndex {
  const { knex, table, source } = pgLexicalIndexOptions.parse(options);
  const tables = pgLexicalTables(table, source as LexicalSource);
  const commonTerms = createCommonTerms();

  async function attempt<T>(operation: string, work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      if (error instanceof RangeError) throw error;
      throw new Error(`postgres lexical index ${table}: ${operation} failed: ${(error as Error).message}`, { cause: error });
    }
  }

  /**
   * Creates what is missing; when the triggers were missing, empties the index for a rebuild; when the index
   * predates NFKC documents, has the backfill walk it again ({@link recordTextForm}).
   * @returns whether a backfill must run.
   */
  async function prepare(): Promise<boolean> {
    return knex.transaction(async (trx) => {
      await trx.raw(`select pg_advisory_xact_lock(hashtext(current_schema() || '.' || ?))`, [`${table}_meta`]);
      const found = await trx.raw(`select to_regclass(quote_ident(current_schema()) || '.' || quote_ident(?)) is not null as present`, [
        tables.source.name,
      ]);
      if (!(found.rows[0] as { present: boolean }).present) throw new Error(`the source table ${tables.source.name} does not exist`);
      if (await createPgLexicalTables(trx, tables)) {
        await trx.raw(`truncate ${tables.docs}`);
        await trx.raw(`delete from ${tables.meta}`);
      }
      await recordTextForm(trx, tables);
      const { rows } = await trx.raw(`select value from ${tables.meta} where key = 'state'`);
      return (rows[0] as { value: string } | undefined)?.value !== 'ready';
    });
  }

  async function countSource(after: string | null): Promise<number> {
    const { rows } = await knex.raw(
      `select count(*)::int as n from ${tables.source.table} s
       where ${tables.source.only('s')} and (?::text is null or s.${tables.source.key} collate "C" <= ?)`,
      [after, after],
    );
    return (rows[0] as { n: number }).n;
  }

  /**
   * Indexes the next batch of source rows after the stored cursor, in key
   * order, in one transaction that holds the source table in SHARE mode
   * (writers wait for the batch, so no row is indexed after its delete).
   * A row already indexed keeps its doc unless the doc made now differs (an
   * index built before documents were NFKC), so an upgrade rewrites only those.
   * @returns rows walked; 0 once finished (the state is then `ready`).
   */
  async function backfillStep(): Promise<number> {
    const { source } = tables;
    return knex.transaction(async (trx) => {
      await trx.raw(`lock table ${source.table} in share mode`);
      const cursorRows = await trx.raw(`select value from ${tables.meta} where key = 'cursor'`);
      const cursor = (cursorRows.rows[0] as { value: string } | undefined)?.value ?? null;
      const { rows } = await trx.raw(
        `with batch as (
           select s.* from ${source.table} s
           where ${source.only('s')} and (?::text is null or s.${source.key} collate "C" > ?)
           order by s.${source.key} collate "C" limit ?
         ), added as (
           insert into ${tables.docs} (id, keys, doc)
           select b.${source.key}, ${keysExpression(tables, 'b')}, ${documentExpression(tables, 'b')} from batch b
           on conflict (id) do update set doc = excluded.doc where ${tables.docs}.doc is distinct from excluded.doc
         )
         select count(*)::int as n, max(${source.key} collate "C") as last from batch`,
        [cursor, cursor, BACKFILL_BATCH],
      );
      const { n, last } = rows[0] as { n: number; last: string | null };
      const saved = n === 0 ? ['state', 'ready'] : ['cursor', last];
      await trx.raw(`insert into ${tables.meta} (key, value) values (?, ?) on conflict (key) do update set value = excluded.value`, saved);
      return n;
    });
  }

  return {
    async ensure(request = {}) {
      const { onProgress } = request;
      await attempt('ensure', async () => {
        if (!(await prepare())) return;
        const { rows } = await knex.raw(`select value from ${tables.meta} where key = 'cursor'`);
        const cursor = (rows[0] as { value: string } | undefined)?.value ?? null;
        let total = await countSource(null);
        let done = cursor === null ? 0 : await countSource(cursor);
        onProgress?.(done, total);
        for (;;) {
          const walked = await backfillStep();
          if (walked === 0) return;
          done += walked;
          total = Math.max(total, done);
          onProgress?.(done, total);
        }
      });
    },

    async query({ text, k, filter, attach }) {
      if (!Number.isInteger(k) || k < 0) throw new RangeError(`k must be a non-negative integer, got ${k}`);
      let columns = '';
      let join = '';
      if (attach !== undefined) {
        const sql = attachSql(attach, 't.id');
        columns = `, ${sql.select.join(', ')}`;
        join = sql.join;
      }
      const terms = lexicalTerms(text);
      const keys = filterVisibilityKeys(filter);
      if (k === 0 || terms.length === 0 || keys.length === 0) return [];
      return attempt('query', async () => {
        const counts = await commonTerms.countsAsync(terms, async (unknown) => {
          const counted = await queryPlannedEachTime<{ n: number }>(
            knex,
            `select (select count(*)::int from (
               select 1 from ${tables.docs} d where d.doc @@ to_tsquery('english', quote_literal(t.term)) limit ${MAX_LEXICAL_POSTINGS + 1}
             ) s) as n
             from unnest($1::text[]) with ordinality t(term, position) order by t.position`,
            [unknown],
          );
          return counted.map((row) => row.n);
        });
        const kept = selectiveTerms(terms, counts);
        if (kept.length === 0) return [];
        const query = kept.map((term) => `'${term}'`).join(' | ');
        const rows = await queryPlannedEachTime<RankedRow>(
          knex,
          `select t.id, t.score${columns} from (
             select d.id, ts_rank_cd(d.doc, q, 1)::float8 as score
             from ${tables.docs} d, to_tsquery('english', $1) q
             where d.doc @@ q and d.keys && $2::text[]
             order by score desc, d.id collate "C" limit $3
           ) t ${join}
           order by t.score desc, t.id collate "C"`,
          [query, keys, k],
        );
        return rows.map((row) => {
          const hit: LexicalHit = { id: row.id, score: row.score };
          const attached = attachedRow(row);
          if (attached !== undefined) hit.row = attached;
          return hit;
        });
      });
    },

    async count() {
      return attempt('count', async () => {
        const { rows } = await knex.raw(`select count(*)::int as n from ${tables.docs}`);
        return (rows[0] as { n: number }).n;
      });
    },
  };
}
