import type BetterSqlite3 from 'better-sqlite3';
import type { SqliteVectorTables } from './vector-tables.js';

/** An item ready to write: unit vector bytes and visibility keys. */
export interface PreparedItem {
  id: string;
  agentId: string;
  keys: string[];
  blob: Buffer;
}

/** Rows for another table: quoted table and column names, values in column order. */
export interface PreparedRows {
  table: string;
  columns: readonly string[];
  values: ReadonlyArray<readonly unknown[]>;
}

/**
 * Statements of the SQLite vector index, run synchronously on one
 * better-sqlite3 connection inside a transaction the caller holds. Each SQL
 * text is fixed per table, so the connection's statement cache prepares it
 * once. vec0 wants integer rowids and metadata values; JavaScript numbers
 * bind as floats, hence the casts.
 */

/**
 * Inserts new items and replaces existing ones (same id): their agent, set of
 * visibility keys and vector. Sets no item uses any more are dropped.
 */
export function writeItems(db: BetterSqlite3.Database, tables: SqliteVectorTables, items: readonly PreparedItem[]): void {
  const setIds = resolveScopeSets(db, tables, items);
  const findItem = db.prepare(`select rid, set_id from ${tables.items} where id = ?`);
  const insertItem = db.prepare(`insert into ${tables.items} (id, agent_id, set_id) values (?, ?, ?)`);
  const updateItem = db.prepare(`update ${tables.items} set agent_id = ?, set_id = ? where rid = ?`);
  const insertVector = db.prepare(
    `insert into ${tables.vectors} (rowid, embedding, set_id) values (cast(? as integer), ?, cast(? as integer))`,
  );
  const updateVector = db.prepare(
    `update ${tables.vectors} set embedding = ?, set_id = cast(? as integer) where rowid = cast(? as integer)`,
  );
  const abandoned = new Set<number>();
  for (const item of items) {
    const setId = setIds.get(signatureOf(item.keys)) as number;
    const existing = findItem.get(item.id) as { rid: number; set_id: number } | undefined;
    if (existing === undefined) {
      const rid = Number(insertItem.run(item.id, item.agentId, setId).lastInsertRowid);
      insertVector.run(rid, item.blob, setId);
      continue;
    }
    if (existing.set_id !== setId) abandoned.add(existing.set_id);
    updateItem.run(item.agentId, setId, existing.rid);
    updateVector.run(item.blob, setId, existing.rid);
  }
  dropUnusedScopeSets(db, tables, abandoned);
}

/**
 * Deletes the items with these ids (unknown ids are ignored) and their
 * vectors, then the sets no item uses any more.
 * @returns how many items were deleted.
 */
export function removeItems(db: BetterSqlite3.Database, tables: SqliteVectorTables, ids: readonly string[]): number {
  const deleteItem = db.prepare(`delete from ${tables.items} where id = ? returning rid, set_id`);
  const deleteVector = db.prepare(`delete from ${tables.vectors} where rowid = cast(? as integer)`);
  const touched = new Set<number>();
  let deleted = 0;
  for (const id of new Set(ids)) {
    const row = deleteItem.get(id) as { rid: number; set_id: number } | undefined;
    if (row === undefined) continue;
    deleteVector.run(row.rid);
    touched.add(row.set_id);
    deleted += 1;
  }
  dropUnusedScopeSets(db, tables, touched);
  return deleted;
}

/** Inserts `rows` one statement per row (the statement is prepared once). */
export function insertRows(db: BetterSqlite3.Database, rows: PreparedRows): void {
  const insert = db.prepare(`insert into ${rows.table} (${rows.columns.join(', ')}) values (${rows.columns.map(() => '?').join(', ')})`);
  for (const values of rows.values) insert.run(values);
}

/** The JSON signature of a sorted key list, the `signature` column of the scope-sets table. */
const signatureOf = (keys: readonly string[]) => JSON.stringify(keys);

/**
 * The set id of each distinct key list in `items`, keyed by its signature;
 * sets seen for the first time are created with their keys.
 */
function resolveScopeSets(db: BetterSqlite3.Database, tables: SqliteVectorTables, items: readonly PreparedItem[]): Map<string, number> {
  const findSet = db.prepare(`select set_id from ${tables.scopeSets} where signature = ?`);
  const setIds = new Map<string, number>();
  for (const item of items) {
    const signature = signatureOf(item.keys);
    if (setIds.has(signature)) continue;
    const found = findSet.get(signature) as { set_id: number } | undefined;
    if (found !== undefined) {
      setIds.set(signature, found.set_id);
      continue;
    }
    const setId = Number(db.prepare(`insert into ${tables.scopeSets} (signature) values (?)`).run(signature).lastInsertRowid);
    const addKey = db.prepare(`insert into ${tables.scopeKeys} (scope_key, set_id) values (?, ?)`);
    for (const key of item.keys) addKey.run(key, setId);
    setIds.set(signature, setId);
  }
  return setIds;
}

/** Deletes those of `setIds` that no item points at any more, with their keys. */
function dropUnusedScopeSets(db: BetterSqlite3.Database, tables: SqliteVectorTables, setIds: ReadonlySet<number>): void {
  if (setIds.size === 0) return;
  const inUse = db.prepare(`select 1 from ${tables.items} where set_id = ? limit 1`);
  const deleteKeys = db.prepare(`delete from ${tables.scopeKeys} where set_id = ?`);
  const deleteSet = db.prepare(`delete from ${tables.scopeSets} where set_id = ?`);
  for (const setId of setIds) {
    if (inUse.get(setId) !== undefined) continue;
    deleteKeys.run(setId);
    deleteSet.run(setId);
  }
}
