import type { Knex } from 'knex';

/** A semantic memory as the re-embed walk reads it. */
export interface SemanticRow {
  id: string;
  agent_id: string;
  /** JSON array of scope entries. */
  scope: string;
  text: string;
}

const semantic = (knex: Knex) => knex('memory_records').where({ kind: 'semantic' });

/** Number of semantic memories, or of those with an id up to and including `upTo` (in the database's id order). */
export async function countSemantic(knex: Knex, upTo?: string | null): Promise<number> {
  const query = semantic(knex);
  if (upTo !== undefined && upTo !== null) query.andWhere('id', '<=', upTo);
  const row = (await query.count({ n: '*' }).first()) as { n: number | string } | undefined;
  return Number(row?.n ?? 0);
}

/** The next `limit` semantic memories after `cursor` (an id; `null` = from the start), in id order. */
export async function semanticBatchAfter(knex: Knex, cursor: string | null, limit: number): Promise<SemanticRow[]> {
  const query = semantic(knex).select('id', 'agent_id', 'scope', 'text').orderBy('id').limit(limit);
  if (cursor !== null) query.andWhere('id', '>', cursor);
  return (await query) as SemanticRow[];
}

/** Which of `ids` (at most a few thousand) are still stored memories. */
export async function storedIds(knex: Knex, ids: readonly string[]): Promise<Set<string>> {
  const rows = (await knex('memory_records').select('id').whereIn('id', ids)) as Array<{ id: string }>;
  return new Set(rows.map((row) => row.id));
}
