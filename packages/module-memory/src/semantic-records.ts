import { chunks, SQL_ID_CHUNK } from '@agentinfra/core';
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

/** Which of `ids` are still stored memories ({@link SQL_ID_CHUNK} ids per statement). */
export async function storedIds(knex: Knex, ids: readonly string[]): Promise<Set<string>> {
  const stored = new Set<string>();
  for (const slice of chunks(ids, SQL_ID_CHUNK)) {
    const rows = (await knex('memory_records').select('id').whereIn('id', slice)) as Array<{ id: string }>;
    for (const row of rows) stored.add(row.id);
  }
  return stored;
}
