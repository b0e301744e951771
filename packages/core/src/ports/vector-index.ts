/** One scored result of {@link VectorIndex.query}. */
export interface VectorHit {
  /** Id of the indexed row (the memory id). */
  id: string;
  /** Cosine similarity in [-1, 1]; higher is closer. */
  score: number;
  /**
   * With {@link VectorAttach}: the attached columns of the row whose key
   * equals `id` (column name → value as the driver returns it), absent when
   * no such row exists.
   */
  row?: Record<string, unknown>;
}

/** A value bound into SQL: text, a number or NULL. */
export type SqlValue = string | number | null;

/**
 * Rows stored in the same transaction as the vectors of an upsert (e.g. the
 * records the vectors belong to), so that both are stored or neither is.
 * `table` and the column names (the keys of the first row, which every row
 * must share) are plain SQL identifiers (`[A-Za-z_][A-Za-z0-9_]*`, at most 63
 * characters) of a table in the index's database.
 */
export interface VectorInsert {
  table: string;
  rows: readonly Record<string, SqlValue>[];
}

/**
 * Columns of another table returned with each hit of a query, joined in the
 * same SQL statement (one round trip instead of a second query): the row of
 * `table` whose `key` column equals the hit's id. Identifiers as in
 * {@link VectorInsert}.
 */
export interface VectorAttach {
  table: string;
  key: string;
  columns: readonly string[];
}

/** A vector with the attributes a query filters on. */
export interface VectorItem {
  id: string;
  /** Owning agent. */
  agentId: string;
  /** Visibility scopes of the row (`self`, `team:<name>`). */
  scopes: readonly string[];
  /** Unit-length vector of the index's dimensions. */
  vector: Float32Array;
}

/**
 * Exact or approximate nearest-neighbour search by cosine similarity,
 * filtered by visibility. Implementations: exact scan on SQLite, pgvector
 * HNSW on PostgreSQL.
 */
export interface VectorIndex {
  /** Creates tables and indexes for vectors of `dimensions` (idempotent). */
  ensure(options: { dimensions: number }): Promise<void>;
  /**
   * Inserts or replaces items by id and, with `insert`, inserts those rows in
   * the same transaction: when anything fails (a duplicate key among the
   * rows, say), no item and no row is stored.
   * @throws RangeError for a vector of the wrong dimension, a zero vector or
   *   identifiers that are not plain; the database's error otherwise.
   */
  upsert(options: { items: readonly VectorItem[]; insert?: VectorInsert }): Promise<void>;
  /** Removes items by id; unknown ids are ignored. @returns how many were removed. */
  remove(options: { ids: readonly string[] }): Promise<number>;
  /**
   * Top-`k` items by cosine similarity to `vector`, best first, among the
   * items visible under `filter`: an item matches when its owner is
   * `filter.ownerAgentId` and it has scope `self`, or when it carries one
   * of `filter.teamScopes` (`team:<name>` entries).
   * Returns exactly `min(k, matching items)` hits even when the filter is
   * selective. With `attach`, each hit carries the attached row's columns
   * in `row`.
   */
  query(options: {
    vector: Float32Array;
    k: number;
    filter: { ownerAgentId: string; includeSelf: boolean; teamScopes: readonly string[] };
    attach?: VectorAttach;
  }): Promise<VectorHit[]>;
  /** Number of indexed items. */
  count(): Promise<number>;
}
