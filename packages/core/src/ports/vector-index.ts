/** One scored result of {@link VectorIndex.query}. */
export interface VectorHit {
  /** Id of the indexed row (the memory id). */
  id: string;
  /** Cosine similarity in [-1, 1]; higher is closer. */
  score: number;
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
  /** Inserts or replaces items by id. */
  upsert(options: { items: readonly VectorItem[] }): Promise<void>;
  /** Removes items by id; unknown ids are ignored. @returns how many were removed. */
  remove(options: { ids: readonly string[] }): Promise<number>;
  /**
   * Top-`k` items by cosine similarity to `vector`, best first, among the
   * items visible under `filter`: an item matches when its owner is
   * `filter.ownerAgentId` and it has scope `self`, or when it carries one
   * of `filter.teamScopes` (`team:<name>` entries).
   * Returns exactly `min(k, matching items)` hits even when the filter is
   * selective.
   */
  query(options: {
    vector: Float32Array;
    k: number;
    filter: { ownerAgentId: string; includeSelf: boolean; teamScopes: readonly string[] };
  }): Promise<VectorHit[]>;
  /** Number of indexed items. */
  count(): Promise<number>;
}
