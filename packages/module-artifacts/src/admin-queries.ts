import { createListCursor, isoTimestamp, keysetPage, NotFoundError, whereAfterKeyset } from '@agentinfra/core';
import type { Knex } from 'knex';
import { z } from 'zod';
import type {
  AdminListArtifactsRequest,
  AdminListArtifactsResponse,
  AdminListGrantsRequest,
  AdminListGrantsResponse,
  AdminSummaryResponse,
  GrantState,
} from './admin-schemas.js';
import type { ArtifactStatus } from './schemas.js';
import type { ArtifactsDeps } from './service.js';

const createdCursor = createListCursor({ schema: z.strictObject({ c: z.int(), i: z.string().min(1).max(64) }), field: 'cursor' });

const countOf = (row: unknown) => Number((row as { n: number | string } | undefined)?.n ?? 0);

/** Rows after a `(created_at, id)` keyset cursor in newest-first order. */
function after(query: Knex.QueryBuilder, idColumn: string, cursor: string | null): void {
  if (cursor === null) return;
  const position = createdCursor.decode(cursor);
  whereAfterKeyset(query, 'desc', ['created_at', position.c], [idColumn, position.i]);
}

/**
 * What operators list across agents' artifacts (the console's reads):
 * artifacts newest first by owner and status with their live grant counts,
 * the grants of one artifact (never a token), and service-wide counts.
 */
export function createArtifactsAdmin(deps: Pick<ArtifactsDeps, 'sql' | 'clock'>) {
  const knex = () => deps.sql.knex;
  return {
    /**
     * Artifacts newest first, optionally one agent's, of one status
     * (`expired` once `expires_at` passed, whatever the stored state) or
     * only `artifact_id` (by its primary key).
     * @throws InputError for a cursor this list did not make.
     */
    async listArtifacts(input: AdminListArtifactsRequest): Promise<AdminListArtifactsResponse> {
      const at = deps.clock.now();
      const query = knex()('artifacts_items').select(
        'artifact_id',
        'agent_id',
        'key',
        'mime',
        'size',
        'status',
        'sha256',
        'created_at',
        'expires_at',
      );
      if (input.agent_id !== undefined) query.where({ agent_id: input.agent_id });
      if (input.artifact_id !== undefined) query.where({ artifact_id: input.artifact_id });
      if (input.status === 'expired') query.where('expires_at', '<=', at);
      else if (input.status !== undefined) query.where({ status: input.status }).where('expires_at', '>', at);
      after(query, 'artifact_id', input.cursor);
      const rows = (await query
        .orderBy([
          { column: 'created_at', order: 'desc' },
          { column: 'artifact_id', order: 'desc' },
        ])
        .limit(input.limit + 1)) as Array<{
        artifact_id: string;
        agent_id: string;
        key: string;
        mime: string;
        size: number | string;
        status: 'pending' | 'committed';
        sha256: string | null;
        created_at: number | string;
        expires_at: number | string;
      }>;
      const { page, next_cursor } = keysetPage(rows, input.limit, (last) =>
        createdCursor.encode({ c: Number(last.created_at), i: last.artifact_id }),
      );
      const grants = new Map<string, number>();
      if (page.length > 0) {
        const counts = (await knex()('artifacts_grants')
          .select('artifact_id')
          .count({ n: '*' })
          .whereIn(
            'artifact_id',
            page.map((row) => row.artifact_id),
          )
          .whereNull('revoked_at')
          .where('expires_at', '>', at)
          .groupBy('artifact_id')) as Array<{ artifact_id: string; n: number | string }>;
        for (const row of counts) grants.set(row.artifact_id, Number(row.n));
      }
      return {
        artifacts: page.map((row) => ({
          artifact_id: row.artifact_id,
          agent_id: row.agent_id,
          key: row.key,
          mime: row.mime,
          size: Number(row.size),
          sha256: row.sha256,
          status: (Number(row.expires_at) <= at ? 'expired' : row.status) as ArtifactStatus,
          created_at: isoTimestamp(Number(row.created_at)),
          expires_at: isoTimestamp(Number(row.expires_at)),
          active_grants: grants.get(row.artifact_id) ?? 0,
        })),
        next_cursor,
      };
    },

    /**
     * The grants of one artifact, newest first, with their state (never a token or its hash).
     * @throws NotFoundError when the artifact does not exist; InputError for a foreign cursor.
     */
    async listGrants(input: AdminListGrantsRequest): Promise<AdminListGrantsResponse> {
      const at = deps.clock.now();
      const owner = (await knex()('artifacts_items').select('agent_id').where({ artifact_id: input.artifact_id }).first()) as
        | { agent_id: string }
        | undefined;
      if (!owner) throw new NotFoundError(`Artifact "${input.artifact_id}" does not exist.`);
      const query = knex()('artifacts_grants')
        .select('grant_id', 'to_agent', 'created_at', 'expires_at', 'revoked_at')
        .where({ artifact_id: input.artifact_id });
      after(query, 'grant_id', input.cursor);
      const rows = (await query
        .orderBy([
          { column: 'created_at', order: 'desc' },
          { column: 'grant_id', order: 'desc' },
        ])
        .limit(input.limit + 1)) as Array<{
        grant_id: string;
        to_agent: string;
        created_at: number | string;
        expires_at: number | string;
        revoked_at: number | string | null;
      }>;
      const { page, next_cursor } = keysetPage(rows, input.limit, (last) =>
        createdCursor.encode({ c: Number(last.created_at), i: last.grant_id }),
      );
      return {
        artifact_id: input.artifact_id,
        agent_id: owner.agent_id,
        grants: page.map((row) => ({
          grant_id: row.grant_id,
          to_agent: row.to_agent,
          created_at: isoTimestamp(Number(row.created_at)),
          expires_at: isoTimestamp(Number(row.expires_at)),
          revoked_at: row.revoked_at === null ? null : isoTimestamp(Number(row.revoked_at)),
          state: (row.revoked_at !== null ? 'revoked' : Number(row.expires_at) <= at ? 'expired' : 'active') as GrantState,
        })),
        next_cursor,
      };
    },

    /** Service-wide counts: artifacts by status, bytes committed, live grants. */
    async summary(): Promise<AdminSummaryResponse> {
      const at = deps.clock.now();
      const [rows, expired, grants] = await Promise.all([
        knex()('artifacts_items')
          .select('status')
          .count({ n: '*' })
          .sum({ bytes: 'size' })
          .where('expires_at', '>', at)
          .groupBy('status') as Promise<Array<{ status: string; n: number | string; bytes: number | string | null }>>,
        knex()('artifacts_items').count({ n: '*' }).where('expires_at', '<=', at).first(),
        knex()('artifacts_grants').count({ n: '*' }).whereNull('revoked_at').where('expires_at', '>', at).first(),
      ]);
      const committed = rows.find((row) => row.status === 'committed');
      const pending = rows.find((row) => row.status === 'pending');
      return {
        artifacts: countOf(committed) + countOf(pending) + countOf(expired),
        committed: countOf(committed),
        pending: countOf(pending),
        expired: countOf(expired),
        committed_bytes: Number(committed?.bytes ?? 0),
        active_grants: countOf(grants),
      };
    },
  };
}

/** The operator listings of agent-artifacts (see {@link createArtifactsAdmin}). */
export type ArtifactsAdmin = ReturnType<typeof createArtifactsAdmin>;
