import type { VectorAttach } from './vector-index.js';

/**
 * The table a {@link LexicalIndex} follows, in the index's own database. All
 * names are plain SQL identifiers (`[A-Za-z_][A-Za-z0-9_]*`, at most 63
 * characters).
 */
export interface LexicalSource {
  /** The followed table, e.g. `memory_records`. */
  table: string;
  /** Column holding each row's id (text, unique): the id of its hits. */
  key: string;
  /** Column holding the text to index. */
  text: string;
  /** Column holding the owning agent's id. */
  owner: string;
  /** Column holding the row's visibility scopes as a JSON array of strings (`self`, `team:<name>`). */
  scopes: string;
  /** Only rows whose `column` equals `equals` are indexed (e.g. `kind` = `semantic`); absent: every row. */
  only?: { column: string; equals: string };
}

/** One scored result of {@link LexicalIndex.query}. */
export interface LexicalHit {
  /** The row's `key`. */
  id: string;
  /**
   * Relevance of the row to the query text, > 0, higher is better: BM25 on
   * SQLite (FTS5), cover density (`ts_rank_cd`) on PostgreSQL. Comparable
   * only between hits of one query; fuse by rank, not by value.
   */
  score: number;
  /** With `attach`: the attached row's columns, as in {@link VectorAttach}. */
  row?: Record<string, unknown>;
}

/** Visibility filter of a lexical query: the same rule as the vector index's. */
export interface LexicalFilter {
  ownerAgentId: string;
  includeSelf: boolean;
  teamScopes: readonly string[];
}

/**
 * Full-text search over the text column of a table ({@link LexicalSource}),
 * filtered by visibility. The index follows the table by itself (database
 * triggers), whoever writes it: a row inserted, changed or deleted there is
 * indexed, re-indexed or dropped in the same transaction, or queued in that
 * transaction and indexed before the next query reads (SQLite: FTS5 indexes
 * queued rows in batches), so a committed write is found by the next query,
 * a rolled-back one never, and a deleted row is never returned.
 *
 * Query text is split into words (letters, marks and digits, lower-cased
 * after NFKC), English stop words are dropped (see `lexicalTerms`), and a row
 * matches when it contains any remaining word after English stemming (FTS5's
 * `porter` tokenizer on SQLite, the `english` text-search configuration on
 * PostgreSQL). The cost of a query is bounded: its words are searched
 * rarest first while the rows they match (across the whole index) stay
 * within `MAX_LEXICAL_POSTINGS`; words more common than that are left out
 * (see `selectiveTerms`). Implementations: FTS5 on SQLite, `tsvector` with
 * GIN on PostgreSQL.
 */
export interface LexicalIndex {
  /**
   * Creates the index's tables and the source's triggers when missing, then
   * indexes source rows written before the index existed (batch by batch,
   * resumable, safe while others write): the upgrade path of an existing
   * store. Idempotent and cheap once built.
   * @param options.onProgress called before the first batch and after each, with rows indexed and rows to index.
   */
  ensure(options?: { onProgress?: (done: number, total: number) => void }): Promise<void>;
  /**
   * The `k` rows most relevant to `text`, best first (equal scores by
   * ascending id), among the rows visible under `filter` (own rows scoped
   * `self` with `includeSelf`, rows carrying one of `teamScopes`): the filter
   * applies before ranking, so exactly `min(k, matching visible rows)` hits
   * come back. A text without any word left after stop words has no hits.
   * With `attach`, each hit carries the attached row's columns in `row`.
   * @throws RangeError for a bad `k` or identifiers that are not plain.
   */
  query(options: { text: string; k: number; filter: LexicalFilter; attach?: VectorAttach }): Promise<LexicalHit[]>;
  /** Number of indexed rows. */
  count(): Promise<number>;
}
