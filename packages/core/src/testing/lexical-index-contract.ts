import type { Knex } from 'knex';
import { afterEach, describe, expect, it } from 'vitest';
import type { LexicalHit, LexicalIndex, LexicalSource } from '../ports/lexical-index.js';
import { chunks } from '../sql-chunks.js';
import { MAX_LEXICAL_POSTINGS } from '../vectors/lexical-terms.js';

/** Options of {@link runLexicalIndexContract}. */
export interface LexicalIndexContractOptions {
  /** Name of the implementation, shown in the test titles. */
  name: string;
  /**
   * A fresh, empty database for one test: `knex` reaches it (the suite
   * creates its source tables with it), `index` builds a lexical index there
   * (as `SqlDatabase.lexicalIndex` does), `cleanup` runs after the test and
   * drops what was created.
   */
  create: () => Promise<{
    knex: Knex;
    index(options: { table: string; source: LexicalSource }): LexicalIndex;
    cleanup(): Promise<void>;
  }>;
}

/** A row of the suite's source table. */
interface SourceRow {
  id: string;
  agent_id: string;
  kind: string;
  body: string;
  scope: string;
}

/** The suite's source description: `docs` rows of kind `semantic`. */
const SOURCE: Omit<LexicalSource, 'table'> = {
  key: 'id',
  text: 'body',
  owner: 'agent_id',
  scopes: 'scope',
  only: { column: 'kind', equals: 'semantic' },
};

const own = (agent: string) => ({ ownerAgentId: agent, includeSelf: true, teamScopes: [] as string[] });

/** A semantic row of `agent` with `scopes` (default `self`). */
function row(id: string, body: string, agent = 'agent-a', scopes: string[] = ['self'], kind = 'semantic'): SourceRow {
  return { id, agent_id: agent, kind, body, scope: JSON.stringify(scopes) };
}

const ids = (hits: readonly LexicalHit[]) => hits.map((hit) => hit.id);

/** Asserts the ordering every adapter guarantees: scores positive and non-increasing, equal scores by id, no repeats. */
function expectRanked(hits: readonly LexicalHit[]): void {
  expect(new Set(ids(hits)).size).toBe(hits.length);
  hits.forEach((hit, i) => {
    expect(hit.score).toBeGreaterThan(0);
    const previous = hits[i - 1];
    if (previous === undefined) return;
    expect(hit.score).toBeLessThanOrEqual(previous.score);
    if (hit.score === previous.score) expect(previous.id < hit.id).toBe(true);
  });
}

/**
 * The behaviour every {@link LexicalIndex} guarantees (vitest `describe`/`it`):
 * `ensure` indexes the rows a source table already holds (only those the
 * source's `only` selects), reports progress up to the total, is idempotent,
 * and rebuilds after the source table was dropped and created again; inserts,
 * updates and deletes in the source are followed in the same transaction (a
 * rolled-back insert is never found); queries match any non-stop word after
 * stemming, with stored text and query both taken in Unicode NFKC, rank a row holding more of the query's words first, honour the visibility rule
 * before ranking (exactly `min(k, matching visible rows)` hits), attach
 * columns, and take any text (quotes, operators, stop words only) without
 * error.
 */
export function runLexicalIndexContract(options: LexicalIndexContractOptions): void {
  let cleanups: Array<() => Promise<void>> = [];

  /** A database with the source table `table` holding `rows`, and an index over it (not yet ensured). */
  async function open(rows: readonly SourceRow[] = []): Promise<{ knex: Knex; index: LexicalIndex; table: string }> {
    const { knex, index, cleanup } = await options.create();
    cleanups.push(cleanup);
    const table = `contract_docs_${Math.floor(Math.random() * 1e9)}`;
    await knex.schema.createTable(table, (builder) => {
      builder.string('id', 64).primary();
      builder.string('agent_id', 128).notNullable();
      builder.string('kind', 16).notNullable();
      builder.text('body').notNullable();
      builder.text('scope').notNullable();
    });
    cleanups.push(() => knex.schema.dropTableIfExists(table));
    for (const slice of chunks(rows, 200)) await knex(table).insert(slice);
    return { knex, index: index({ table: `${table}_lex`, source: { ...SOURCE, table } }), table };
  }

  describe(`LexicalIndex contract: ${options.name}`, () => {
    afterEach(async () => {
      const pending = cleanups;
      cleanups = [];
      for (const cleanup of pending.reverse()) await cleanup();
    });

    it('indexes the rows a table already holds, in batches with progress, only those selected', async () => {
      const rows = Array.from({ length: 2_600 }, (_, i) =>
        row(`m${String(i).padStart(5, '0')}`, i % 2 === 0 ? `invoice number ${i} for northwind` : `grocery list ${i}`),
      );
      rows.push(row('e1', 'an episode about northwind', 'agent-a', ['self'], 'episode'));
      const { index } = await open(rows);
      const progress: Array<[number, number]> = [];
      await index.ensure({ onProgress: (done, total) => progress.push([done, total]) });
      expect(progress[0]).toEqual([0, 2_600]);
      expect(progress.at(-1)).toEqual([2_600, 2_600]);
      expect(progress.length).toBeGreaterThan(2);
      for (let i = 1; i < progress.length; i++) expect(progress[i]?.[0]).toBeGreaterThanOrEqual(progress[i - 1]?.[0] ?? 0);
      expect(await index.count()).toBe(2_600);
      const hits = await index.query({ text: 'northwind', k: 2_000, filter: own('agent-a') });
      expect(hits).toHaveLength(1_300);
      expect(ids(hits)).not.toContain('e1');
      await index.ensure();
      expect(await index.count()).toBe(2_600);
    });

    it(`leaves out words matching more than ${MAX_LEXICAL_POSTINGS} rows, rarest kept first`, async () => {
      const rows = Array.from({ length: MAX_LEXICAL_POSTINGS + 600 }, (_, i) =>
        row(`m${String(i).padStart(5, '0')}`, `shared ledger entry ${i}${i % 100 === 0 ? ' walrus' : ''}${i % 7 === 0 ? ' lantern' : ''}`),
      );
      const { index } = await open(rows);
      await index.ensure();
      const walrus = rows.filter((_, i) => i % 100 === 0).map((source) => source.id);
      const both = rows.filter((_, i) => i % 100 === 0 || i % 7 === 0).map((source) => source.id);
      expect(await index.query({ text: 'shared ledger', k: 10, filter: own('agent-a') })).toEqual([]);
      expect(ids(await index.query({ text: 'shared walrus', k: 100, filter: own('agent-a') })).sort()).toEqual(walrus);
      expect(ids(await index.query({ text: 'ledger walrus lantern', k: 1_000, filter: own('agent-a') })).sort()).toEqual(both.sort());
    });

    it('follows inserts, updates and deletes of the source in their transaction', async () => {
      const { knex, index, table } = await open();
      await index.ensure();
      await knex(table).insert([row('m1', 'The user prefers tea over coffee'), row('m2', 'Deploy on Fridays is forbidden')]);
      expect(ids(await index.query({ text: 'coffee', k: 5, filter: own('agent-a') }))).toEqual(['m1']);
      await knex
        .transaction(async (trx) => {
          await trx(table).insert(row('m3', 'coffee beans from Kenya'));
          throw new Error('roll back');
        })
        .catch(() => undefined);
      expect(ids(await index.query({ text: 'coffee', k: 5, filter: own('agent-a') }))).toEqual(['m1']);
      await knex(table).where({ id: 'm1' }).update({ body: 'The user prefers water' });
      expect(await index.query({ text: 'coffee', k: 5, filter: own('agent-a') })).toEqual([]);
      expect(ids(await index.query({ text: 'water', k: 5, filter: own('agent-a') }))).toEqual(['m1']);
      await knex(table).where({ id: 'm2' }).update({ kind: 'episode' });
      expect(await index.query({ text: 'deploy', k: 5, filter: own('agent-a') })).toEqual([]);
      await knex(table).where({ id: 'm1' }).delete();
      expect(await index.query({ text: 'water', k: 5, filter: own('agent-a') })).toEqual([]);
      expect(await index.count()).toBe(0);
    });

    it('rebuilds after the source table was dropped and created again', async () => {
      const { knex, index, table } = await open([row('m1', 'kayak trip in Norway')]);
      await index.ensure();
      await knex.schema.dropTable(table);
      await knex.schema.createTable(table, (builder) => {
        builder.string('id', 64).primary();
        builder.string('agent_id', 128).notNullable();
        builder.string('kind', 16).notNullable();
        builder.text('body').notNullable();
        builder.text('scope').notNullable();
      });
      await knex(table).insert(row('m2', 'canoe trip in Sweden'));
      await index.ensure();
      expect(await index.count()).toBe(1);
      expect(await index.query({ text: 'kayak', k: 5, filter: own('agent-a') })).toEqual([]);
      await knex(table).insert(row('m3', 'another canoe'));
      expect(ids(await index.query({ text: 'canoe', k: 5, filter: own('agent-a') })).sort()).toEqual(['m2', 'm3']);
    });

    it('matches any word after stemming, ranks a row with more of the words first, ignores stop words', async () => {
      const rows = [
        row('m1', 'The user runs a marathon in Porto'),
        row('m2', 'The user likes running shoes from Lisbon'),
        row('m3', 'The user is in Lisbon'),
        row('m4', 'The user is in Porto now'),
      ];
      const { index } = await open(rows);
      await index.ensure();
      const running = await index.query({ text: 'When is she running?', k: 10, filter: own('agent-a') });
      expectRanked(running);
      expect(ids(running).sort()).toEqual(['m1', 'm2']);
      const marathon = await index.query({ text: 'marathon user', k: 10, filter: own('agent-a') });
      expectRanked(marathon);
      expect(ids(marathon)[0]).toBe('m1');
      expect(ids(marathon)).toHaveLength(4);
      expect(await index.query({ text: 'is the of and', k: 10, filter: own('agent-a') })).toEqual([]);
      expect(await index.query({ text: '?!', k: 10, filter: own('agent-a') })).toEqual([]);
    });

    it('applies the visibility filter before ranking: exactly min(k, visible matches) hits', async () => {
      const rows = [
        ...Array.from({ length: 40 }, (_, i) => row(`o${String(i).padStart(2, '0')}`, 'kubernetes kubernetes cluster upgrade', 'agent-b')),
        row('t1', 'kubernetes notes for the team', 'agent-b', ['team:ops']),
        row('t2', 'cluster notes', 'agent-c', ['team:dev']),
        row('s1', 'my kubernetes cluster', 'agent-a'),
        row('s2', 'shared kubernetes', 'agent-a', ['self', 'team:ops']),
        row('x1', 'self entry of agent b listed as team scope', 'agent-b', ['self']),
      ];
      const { index } = await open(rows);
      await index.ensure();
      expect(ids(await index.query({ text: 'kubernetes', k: 1, filter: own('agent-a') })).length).toBe(1);
      expect(ids(await index.query({ text: 'kubernetes', k: 10, filter: own('agent-a') })).sort()).toEqual(['s1', 's2']);
      const team = await index.query({
        text: 'kubernetes',
        k: 10,
        filter: { ownerAgentId: 'agent-a', includeSelf: false, teamScopes: ['team:ops'] },
      });
      expect(ids(team).sort()).toEqual(['s2', 't1']);
      const both = await index.query({
        text: 'kubernetes cluster',
        k: 3,
        filter: { ...own('agent-a'), teamScopes: ['team:ops', 'team:dev'] },
      });
      expect(both).toHaveLength(3);
      expectRanked(both);
      expect(ids(both).every((id) => ['s1', 's2', 't1', 't2'].includes(id))).toBe(true);
      expect(
        await index.query({ text: 'entry', k: 10, filter: { ownerAgentId: 'agent-a', includeSelf: false, teamScopes: ['self'] } }),
      ).toEqual([]);
      expect(await index.query({ text: 'kubernetes', k: 0, filter: own('agent-a') })).toEqual([]);
      await expect(index.query({ text: 'kubernetes', k: -1, filter: own('agent-a') })).rejects.toThrow(RangeError);
    });

    it('attaches columns of another table in the same query', async () => {
      const { index, table } = await open([row('m1', 'renew the TLS certificate'), row('m2', 'certificate of deposit')]);
      await index.ensure();
      const hits = await index.query({
        text: 'certificate renew',
        k: 5,
        filter: own('agent-a'),
        attach: { table, key: 'id', columns: ['body', 'kind'] },
      });
      expect(ids(hits)).toEqual(['m1', 'm2']);
      expect(hits[0]?.row).toEqual({ body: 'renew the TLS certificate', kind: 'semantic' });
      await expect(
        index.query({ text: 'x', k: 5, filter: own('agent-a'), attach: { table: 'records; drop', key: 'id', columns: ['a'] } }),
      ).rejects.toThrow(RangeError);
    });

    it('finds text stored in a form other than NFKC by the same string, before and after ensure', async () => {
      const texts = ['invoice ＩＮＶ８８２３１ paid', 'the ﬁnancial report', 'order ①②③ shipped', 'resume\u0301 of the owner'];
      const { knex, index, table } = await open(texts.map((text, i) => row(`b${i}`, text)));
      await index.ensure();
      await knex(table).insert(texts.map((text, i) => row(`w${i}`, text)));
      for (const [i, text] of texts.entries()) {
        expect(ids(await index.query({ text, k: 5, filter: own('agent-a') })).sort(), text).toEqual([`b${i}`, `w${i}`]);
      }
      expect(ids(await index.query({ text: 'INV88231', k: 5, filter: own('agent-a') })).sort()).toEqual(['b0', 'w0']);
    });

    it('takes any query text: quotes, operators and markup are words or nothing', async () => {
      const { index } = await open([row('m1', 'NEAR the "AND" gate, O\'Brien said: col:umn * -minus')]);
      await index.ensure();
      for (const text of ['"', "O'Brien", 'NEAR(a b)', 'AND OR NOT', 'col:umn', '* -minus', '\\', 'a & b | !c <-> d', 'ünïcödé 東京']) {
        const hits = await index.query({ text, k: 5, filter: own('agent-a') });
        expectRanked(hits);
      }
      expect(ids(await index.query({ text: "o'brien", k: 5, filter: own('agent-a') }))).toEqual(['m1']);
    });
  });
}
