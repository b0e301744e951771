import { createListCursor, isoTimestamp, keysetPage } from '@agentinfra/core';
import { z } from 'zod';
import type {
  AdminListMemoriesRequest,
  AdminListMemoriesResponse,
  AdminListProvenancesRequest,
  AdminListProvenancesResponse,
  AdminSummaryResponse,
} from './admin-schemas.js';
import type { MemoryKind } from './schemas.js';
import type { MemoryDeps } from './service.js';

/** Characters of a memory's text an operator listing carries (the rest is cut, `text_truncated: true`). */
export const LISTED_TEXT_CHARS = 500;

const idCursor = createListCursor({ schema: z.strictObject({ i: z.string() }), field: 'cursor' });
const provenanceCursor = createListCursor({ schema: z.strictObject({ p: z.string() }), field: 'cursor' });

const countOf = (row: unknown) => Number((row as { n: number | string } | undefined)?.n ?? 0);

/**
 * The first {@link LISTED_TEXT_CHARS} UTF-16 code units of `text`, one fewer
 * when the cut would fall inside a surrogate pair, so that no half of a
 * character (an emoji, say) is left in the listing.
 */
function listedText(text: string): string {
  if (text.length <= LISTED_TEXT_CHARS) return text;
  const last = text.charCodeAt(LISTED_TEXT_CHARS - 1);
  return text.slice(0, last >= 0xd800 && last <= 0xdbff ? LISTED_TEXT_CHARS - 1 : LISTED_TEXT_CHARS);
}

/**
 * What operators list across agents' memories (the console's reads):
 * memories newest first by agent, kind and provenance, an agent's
 * provenances with counts, and service-wide counts. Memory ids sort by
 * creation time, so the primary key orders the listing.
 */
export function createMemoryAdmin(deps: Pick<MemoryDeps, 'sql'>) {
  const knex = () => deps.sql.knex;
  return {
    /**
     * Memories newest first, optionally one agent's, of one kind, with one provenance.
     * @throws InputError for a cursor this list did not make.
     */
    async listMemories(input: AdminListMemoriesRequest): Promise<AdminListMemoriesResponse> {
      const query = knex()('memory_records').select('id', 'agent_id', 'kind', 'text', 'provenance', 'scope', 'created_at');
      if (input.agent_id !== undefined) query.where({ agent_id: input.agent_id });
      if (input.kind !== undefined) query.where({ kind: input.kind });
      if (input.provenance !== undefined) query.where({ provenance: input.provenance });
      if (input.cursor !== null) query.where('id', '<', idCursor.decode(input.cursor).i);
      const rows = (await query.orderBy('id', 'desc').limit(input.limit + 1)) as Array<{
        id: string;
        agent_id: string;
        kind: MemoryKind;
        text: string;
        provenance: string;
        scope: string;
        created_at: number | string;
      }>;
      const { page, next_cursor } = keysetPage(rows, input.limit, (last) => idCursor.encode({ i: last.id }));
      return {
        memories: page.map((row) => ({
          id: row.id,
          agent_id: row.agent_id,
          kind: row.kind,
          text: listedText(row.text),
          text_truncated: row.text.length > LISTED_TEXT_CHARS,
          provenance: row.provenance,
          scope: JSON.parse(row.scope) as string[],
          created_at: isoTimestamp(Number(row.created_at)),
        })),
        next_cursor,
      };
    },

    /**
     * An agent's provenance tags in code-point order with how many memories carry each.
     * @throws InputError for a cursor this list did not make.
     */
    async listProvenances(input: AdminListProvenancesRequest): Promise<AdminListProvenancesResponse> {
      const query = knex()('memory_records').select('provenance').count({ n: '*' }).where({ agent_id: input.agent_id });
      if (input.cursor !== null) query.where('provenance', '>', provenanceCursor.decode(input.cursor).p);
      const rows = (await query
        .groupBy('provenance')
        .orderBy('provenance')
        .limit(input.limit + 1)) as Array<{ provenance: string; n: number | string }>;
      const { page, next_cursor } = keysetPage(rows, input.limit, (last) => provenanceCursor.encode({ p: last.provenance }));
      return {
        provenances: page.map((row) => ({ provenance: row.provenance, memories: Number(row.n) })),
        next_cursor,
      };
    },

    /** Service-wide counts: memories, and memories of each kind. */
    async summary(): Promise<AdminSummaryResponse> {
      const rows = (await knex()('memory_records').select('kind').count({ n: '*' }).groupBy('kind')) as Array<{
        kind: string;
        n: number | string;
      }>;
      const count = (kind: string) => countOf(rows.find((row) => row.kind === kind));
      return {
        memories: rows.reduce((sum, row) => sum + countOf(row), 0),
        by_kind: { episode: count('episode'), semantic: count('semantic'), kv: count('kv') },
      };
    },
  };
}

/** The operator listings of agent-memory (see {@link createMemoryAdmin}). */
export type MemoryAdmin = ReturnType<typeof createMemoryAdmin>;
