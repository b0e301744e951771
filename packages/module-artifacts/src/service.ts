import {
  AuthenticationError,
  ConflictError,
  createListCursor,
  hashCredential,
  InputError,
  isoTimestamp,
  keysetPage,
  lockedWhen,
  type ModuleDeps,
  NotFoundError,
  newCredential,
  newId,
  PayloadTooLargeError,
  type Principal,
  VerificationError,
  whereAfterKeyset,
} from '@agentinfra/core';
import type { Knex } from 'knex';
import { z } from 'zod';
import { createArtifactsAdmin } from './admin-queries.js';
import { filenameOf } from './artifact-key.js';
import { assertActsFor } from './caller-access.js';
import { withCommitLock } from './commit-lock.js';
import type { ArtifactsConfig } from './config.js';
import { digestObject } from './object-digest.js';
import { queueObjectRemovals, removeQueuedObjects } from './purged-objects.js';
import type {
  ArtifactStatus,
  CommitRequest,
  CommitResponse,
  DownloadRequest,
  DownloadResponse,
  FetchRequest,
  FetchResponse,
  GrantRequest,
  GrantResponse,
  ListRequest,
  ListResponse,
  RegisterRequest,
  RegisterResponse,
  RevokeRequest,
  RevokeResponse,
  UploadCleanupPayload,
} from './schemas.js';
import { newCommittedKey, uploadKeyOf } from './storage-keys.js';

const DAY_MS = 86_400_000;
/** Ended grants are kept this long (so /revoke and /fetch still tell what happened) before the sweep deletes them. */
const RETAIN_ENDED_GRANTS_MS = 7 * DAY_MS;
/** Rows handled per sweep batch. */
const SWEEP_BATCH = 200;

/** /list positions: `created_at` (ms) and id of the last artifact listed, the keys of the newest-first order. */
const listCursor = createListCursor({ schema: z.strictObject({ c: z.int(), i: z.string().min(1).max(64) }), field: 'cursor' });
/** Name of the job that deletes what was PUT to an upload URL after its artifact was committed. */
export const UPLOAD_CLEANUP_JOB = 'artifacts.upload-cleanup';

/** Ports the artifacts service uses. */
export type ArtifactsDeps = ModuleDeps<'sql' | 'blobStore' | 'clock' | 'jobs' | 'lock' | 'agents' | 'logger' | 'settings', ArtifactsConfig>;

interface ArtifactRow {
  artifact_id: string;
  agent_id: string;
  key: string;
  mime: string;
  size: number;
  ttl_days: number;
  status: 'pending' | 'committed';
  sha256: string | null;
  /** The committed object's key; on a pending row, the key a running (or stopped) commit moved the upload to. */
  object_key: string | null;
  created_at: number;
  upload_expires_at: number;
  committed_at: number | null;
  expires_at: number;
}

interface GrantRow {
  grant_id: string;
  artifact_id: string;
  to_agent: string;
  expires_at: number;
  revoked_at: number | null;
}

/** Every blob store key `rows` (purged artifacts) may have objects at: the upload key and the committed object's. */
function objectKeysOf(rows: ReadonlyArray<Pick<ArtifactRow, 'artifact_id' | 'object_key'>>): string[] {
  return rows.flatMap((row) => [uploadKeyOf(row.artifact_id), ...(row.object_key ? [row.object_key] : [])]);
}

const ITEMS = 'artifacts_items';
const GRANTS = 'artifacts_grants';
const USAGE = 'artifacts_usage';

/**
 * agent-artifacts without HTTP. Bytes never pass through this service on
 * upload: /register hands out a blob-store upload URL, /commit checks the
 * upload's size, moves it to a fresh key and verifies its size and SHA-256
 * there (so what is verified is what is served), /grant issues `g_…` tokens
 * stored only as SHA-256, and /fetch turns a live grant into a short-lived
 * download URL.
 * Methods take the parsed request bodies (`z.output` of the schemas in
 * `schemas.ts`: the kernel parses each body once; a library caller with
 * untyped data runs core's `parseRequest` first) and return the response
 * shapes.
 */
export function createArtifactsService(deps: ArtifactsDeps) {
  const knex = () => deps.sql.knex;
  const now = () => deps.clock.now();
  const config = deps.moduleConfig;

  async function loadRow(artifactId: string): Promise<ArtifactRow | undefined> {
    return (await knex()(ITEMS).where({ artifact_id: artifactId }).first()) as ArtifactRow | undefined;
  }

  async function loadFor(artifactId: string, principal: Principal, permission: string): Promise<ArtifactRow> {
    const row = await loadRow(artifactId);
    if (!row) throw new NotFoundError(`Artifact "${artifactId}" does not exist.`);
    assertActsFor(principal, row.agent_id, permission, artifactId);
    return row;
  }

  const statusOf = (row: ArtifactRow, at: number): ArtifactStatus => (row.expires_at <= at ? 'expired' : row.status);

  const committedView = (row: ArtifactRow) => ({
    artifact_id: row.artifact_id,
    status: 'committed' as const,
    size: row.size,
    sha256: row.sha256 as string,
  });

  /** The answer to a commit that finds the artifact already committed: idempotent for the same hash. */
  function alreadyCommitted(row: ArtifactRow, sha256: string): CommitResponse {
    if (row.sha256 !== sha256) {
      throw new ConflictError('The artifact is already committed with another sha256.', { sha256: row.sha256 });
    }
    return committedView(row);
  }

  /**
   * Restricts `query` to artifacts a sweep may delete at `at`: expired, or
   * registered over `abandonPendingAfterSeconds` ago and still pending.
   */
  function purgeable<Q extends Knex.QueryBuilder>(query: Q, at: number): Q {
    return query.andWhere((where) => {
      where
        .where('expires_at', '<=', at)
        .orWhere((pending) =>
          pending.where({ status: 'pending' }).andWhere('created_at', '<=', at - config.abandonPendingAfterSeconds * 1000),
        );
    }) as Q;
  }

  /**
   * Deletes those of `ids` that are still purgeable at `at` (checked again on
   * the rows it locks, so an artifact committed meanwhile stays), with their
   * grants, taking their bytes off their owners' usage and queueing their
   * objects' deletion ({@link queueObjectRemovals}) in the same transaction,
   * then deletes those objects. Objects whose delete fails stay queued (and
   * it is logged) for the next start or run of the
   * `artifacts.remove-purged-objects` job; never a row without its object.
   * @returns how many artifacts were deleted.
   */
  async function purge(ids: readonly string[], at: number): Promise<number> {
    if (ids.length === 0) return 0;
    const deleted = await knex().transaction(async (trx) => {
      // Locked on PostgreSQL: a purge beside this one (two sweeps, a sweep and a /register reclaiming) waits, then finds
      // them gone, and takes nothing off the usage twice.
      const select = purgeable(
        trx(ITEMS)
          .select('artifact_id', 'agent_id', 'size', 'object_key')
          .whereIn('artifact_id', [...ids]),
        at,
      ).orderBy('artifact_id');
      const rows = (await lockedWhen(select, deps.sql.capabilities.multiProcess)) as Array<
        Pick<ArtifactRow, 'artifact_id' | 'agent_id' | 'object_key'> & { size: number | string }
      >;
      if (rows.length === 0) return rows;
      const found = rows.map((row) => row.artifact_id);
      await trx(GRANTS).whereIn('artifact_id', found).delete();
      await trx(ITEMS).whereIn('artifact_id', found).delete();
      await queueObjectRemovals(trx, objectKeysOf(rows));
      const owners = new Map<string, number>();
      for (const row of rows) owners.set(row.agent_id, (owners.get(row.agent_id) ?? 0) + Number(row.size));
      // In agent order, so that two purges never wait for each other's usage rows in opposite orders.
      for (const [agentId, bytes] of [...owners].sort(([a], [b]) => (a < b ? -1 : 1))) {
        await trx(USAGE).where({ agent_id: agentId }).decrement('bytes', bytes);
      }
      return rows;
    });
    if (deleted.length > 0) {
      // Only the objects of this purge: a backlog others left waits for the job, not for this caller.
      await removePurgedObjects({ only: objectKeysOf(deleted) });
    }
    return deleted.length;
  }

  /**
   * Deletes the objects that purges (and commits discarding their copy)
   * queued ({@link removeQueuedObjects}): those of `only` right after they
   * were queued, else the ones left (the blob store failed, or the process
   * ended after the transaction), up to its bound per call, at start and
   * every ten minutes (the `artifacts.remove-purged-objects` job). A failure
   * is logged, not thrown; the objects stay queued for the next call.
   * @param options.signal checked between chunks (the job's).
   * @throws the signal's reason once it aborted.
   */
  async function removePurgedObjects(options: { only?: readonly string[]; signal?: AbortSignal } = {}): Promise<void> {
    try {
      await removeQueuedObjects(knex(), deps.blobStore, {
        ...options,
        onRefused: (error, keys) =>
          deps.logger.warn({ err: error, objects: keys }, 'artifacts: the blob store refused to delete queued objects; they stay queued'),
      });
    } catch (error) {
      if (options.signal?.aborted) throw error;
      deps.logger.warn(
        { err: error },
        'artifacts: could not delete the queued objects of purged artifacts; they stay queued and are retried',
      );
    }
  }

  /**
   * Sets each agent's usage to the sum of its artifacts' sizes, one agent at a
   * time with its usage row locked (so a register or purge of that agent is
   * either wholly counted or not started). Register and purge keep it, so
   * this changes nothing unless something did not: a replica of a build from
   * before the quota serving beside this one during an upgrade.
   * @param signal checked before each agent (the sweep job's).
   * @throws the signal's reason once it aborted; the agents not recounted are left for the next sweep.
   */
  async function recountUsage(signal?: AbortSignal): Promise<void> {
    const agents = (await knex()
      .select('agent_id')
      .from(ITEMS)
      .union((query) => query.select('agent_id').from(USAGE))) as Array<{ agent_id: string }>;
    for (const { agent_id: agentId } of agents) {
      signal?.throwIfAborted();
      await knex().transaction(async (trx) => {
        await trx(USAGE).insert({ agent_id: agentId, bytes: 0 }).onConflict('agent_id').ignore();
        const usage = trx(USAGE).where({ agent_id: agentId });
        await lockedWhen(usage.clone(), deps.sql.capabilities.multiProcess).first();
        const sum = (await trx(ITEMS).where({ agent_id: agentId }).sum({ bytes: 'size' }).first()) as { bytes: number | string | null };
        await usage.update({ bytes: Number(sum?.bytes ?? 0) });
      });
    }
  }

  /**
   * Purges the agent's artifacts that expired and its registrations left
   * uncommitted past `abandonPendingAfterSeconds` (up to one sweep batch of
   * 200), which the daily sweep would remove later: their bytes stop
   * counting against its quota now. @returns how many were purged.
   */
  async function reclaimFor(agentId: string): Promise<number> {
    const at = now();
    const rows = (await purgeable(knex()(ITEMS).select('artifact_id').where({ agent_id: agentId }), at).limit(SWEEP_BATCH)) as Array<{
      artifact_id: string;
    }>;
    return purge(
      rows.map((row) => row.artifact_id),
      at,
    );
  }

  /**
   * Adds `size` bytes to the agent's usage inside `trx` if they fit `quota`
   * (setting `artifacts_max_bytes_per_agent`, read before the transaction):
   * one conditional update, so concurrent registrations cannot pass it together.
   * @throws PayloadTooLargeError (413, details `{ quota_bytes, used_bytes }`) when they do not fit.
   */
  async function reserveBytes(trx: Knex.Transaction, agentId: string, size: number, quota: number): Promise<void> {
    await trx(USAGE).insert({ agent_id: agentId, bytes: 0 }).onConflict('agent_id').ignore();
    const reserved = await trx(USAGE)
      .where({ agent_id: agentId })
      .andWhere('bytes', '<=', quota - size)
      .increment('bytes', size);
    if (reserved > 0) return;
    const used = Number((await trx(USAGE).select('bytes').where({ agent_id: agentId }).first())?.bytes ?? 0);
    throw new PayloadTooLargeError(
      `Agent "${agentId}" has ${used} bytes of artifacts; ${size} more would pass its quota of ${quota} bytes (setting artifacts_max_bytes_per_agent).`,
      { quota_bytes: quota, used_bytes: used },
    );
  }

  /** The 422 for an upload of `actual` bytes where `row` registered another size. */
  const wrongSize = (row: ArtifactRow, actual: number) =>
    new VerificationError(`The upload is ${actual} bytes, not the registered ${row.size}; PUT it again.`, {
      expected_size: row.size,
      actual_size: actual,
    });

  /**
   * Deletes the bytes a commit left at `objectKey` once no row is to name them (they failed verification, another
   * commit won, or the artifact was purged while the commit ran), queueing the key first: when the delete fails it
   * stays queued for the `artifacts.remove-purged-objects` job. Never throws (the commit's answer stands); a
   * failure is logged.
   */
  async function discardCommitCopy(objectKey: string): Promise<void> {
    try {
      await queueObjectRemovals(knex(), [objectKey]);
      await removePurgedObjects({ only: [objectKey] });
    } catch (error) {
      deps.logger.warn(
        { err: error, object_key: objectKey },
        'artifacts: could not delete the discarded copy of a commit; once queued, the job retries it',
      );
    }
  }

  /**
   * Undoes what a commit that stopped half-way (its process ended) left at `objectKey`, the key it named on the
   * pending row: the bytes go back to the upload key, or are dropped when a newer upload is there.
   */
  async function recoverInterrupted(objectKey: string, uploadKey: string): Promise<void> {
    const restored =
      (await deps.blobStore.stat({ key: uploadKey })) === null && (await deps.blobStore.move({ from: objectKey, to: uploadKey }));
    if (!restored) await deps.blobStore.delete({ keys: [objectKey] });
  }

  /**
   * The commit itself, holding the artifact's commit lock: re-reads the row, drops an upload whose size
   * (`stat`) is not the registered one without copying or reading it, then moves, hashes and marks it committed.
   */
  async function commitHeld(body: CommitRequest): Promise<CommitResponse> {
    const row = await loadRow(body.artifact_id);
    if (!row) throw new NotFoundError(`Artifact "${body.artifact_id}" does not exist.`);
    if (row.expires_at <= now()) throw new ConflictError(`Artifact "${row.artifact_id}" has expired.`);
    if (row.status === 'committed') return alreadyCommitted(row, body.sha256);
    const uploadKey = uploadKeyOf(row.artifact_id);
    if (row.object_key) await recoverInterrupted(row.object_key, uploadKey);
    const uploaded = await deps.blobStore.stat({ key: uploadKey });
    if (uploaded && uploaded.size !== row.size) {
      await deps.blobStore.delete({ keys: [uploadKey] }).catch(() => undefined);
      throw wrongSize(row, uploaded.size);
    }
    const objectKey = newCommittedKey(row.artifact_id);
    // Named on the row before the move: a commit whose process stops half-way leaves its bytes where the next commit
    // and the purge of the artifact find them.
    await knex()(ITEMS).where({ artifact_id: row.artifact_id, status: 'pending' }).update({ object_key: objectKey });
    // Once the bytes are not (or no longer) at objectKey, the pending row stops naming it.
    const unnameTarget = () =>
      knex()(ITEMS)
        .where({ artifact_id: row.artifact_id, status: 'pending', object_key: objectKey })
        .update({ object_key: null })
        .catch(() => undefined);
    const moved = await deps.blobStore.move({ from: uploadKey, to: objectKey });
    if (!moved) {
      await unnameTarget();
      const current = await loadRow(row.artifact_id);
      if (current?.status === 'committed') return alreadyCommitted(current, body.sha256);
      throw new VerificationError('Nothing has been uploaded: PUT the bytes to upload_url first.', {
        expected_size: row.size,
        actual_size: null,
      });
    }
    let kept = false;
    let bodyDone = false;
    try {
      const digest = await digestObject(deps.blobStore, objectKey);
      // Checked again: the upload URL may have replaced the object between the stat and the move.
      if (!digest || digest.size !== row.size) throw wrongSize(row, digest?.size ?? 0);
      if (digest.sha256 !== body.sha256) {
        throw new VerificationError('The upload does not have the given sha256; PUT it again.', {
          expected_sha256: body.sha256,
          actual_sha256: digest.sha256,
        });
      }
      const updated = await knex().transaction(async (trx) => {
        const count = await trx(ITEMS)
          .where({ artifact_id: row.artifact_id, status: 'pending' })
          .update({ status: 'committed', sha256: body.sha256, object_key: objectKey, committed_at: now() });
        if (count > 0) {
          await deps.jobs.enqueue({
            name: UPLOAD_CLEANUP_JOB,
            payload: { artifact_id: row.artifact_id },
            runAt: row.upload_expires_at + 60_000,
            dedupeKey: `${UPLOAD_CLEANUP_JOB}:${row.artifact_id}`,
            trx,
          });
        }
        // Past here only the COMMIT itself can fail, and then whether it happened is unknown.
        bodyDone = true;
        return count;
      });
      if (updated === 0) {
        await discardCommitCopy(objectKey);
        kept = true;
        const current = await loadRow(row.artifact_id);
        if (!current) throw new NotFoundError(`Artifact "${row.artifact_id}" does not exist.`);
        return alreadyCommitted(current, body.sha256);
      }
      kept = true;
    } catch (error) {
      // Bytes that do not match are dropped (the caller PUTs again). After any other failure (the database or the
      // blob store was unavailable) they go back to the upload key, so that repeating the commit finds them. Only
      // when the COMMIT itself failed may it have happened all the same: then the row decides, and when it cannot
      // be read the bytes stay where the row may point.
      if (!kept) {
        if (error instanceof VerificationError) {
          await discardCommitCopy(objectKey);
          await unnameTarget();
        } else {
          const current = bodyDone ? await loadRow(row.artifact_id).catch(() => null) : null;
          if (!bodyDone || current?.status === 'pending') {
            if (await deps.blobStore.move({ from: objectKey, to: uploadKey }).catch(() => false)) {
              await unnameTarget();
              // A purge that read the row before it named objectKey deleted the row and not these bytes: with no row
              // left, nothing would ever delete them at the upload key. (A purge after this read deletes them itself.)
              if ((await loadRow(row.artifact_id).catch(() => row)) === undefined) await discardCommitCopy(uploadKey);
            }
          }
        }
      }
      throw error;
    }
    return { artifact_id: row.artifact_id, status: 'committed' as const, size: row.size, sha256: body.sha256 };
  }

  const service = {
    /**
     * Registers an artifact and returns the URL to PUT its bytes to.
     * @param body.size bytes, 1 to the configured maximum.
     * @throws PayloadTooLargeError (413) when `size` is over the maximum, or over what the agent's quota has left.
     */
    async register(body: RegisterRequest): Promise<RegisterResponse> {
      if (body.size > config.maxSizeBytes) {
        throw new PayloadTooLargeError(`size ${body.size} is over the limit of ${config.maxSizeBytes} bytes.`);
      }
      const artifactId = newId('art_');
      const createdAt = now();
      const upload = await deps.blobStore.createUploadUrl({
        key: uploadKeyOf(artifactId),
        size: body.size,
        contentType: body.mime,
        expiresInSeconds: config.uploadUrlSeconds,
      });
      const quota = await deps.settings.get<number>('artifacts_max_bytes_per_agent');
      const store = () =>
        knex().transaction(async (trx) => {
          await reserveBytes(trx, body.agent_id, body.size, quota);
          await trx(ITEMS).insert({
            artifact_id: artifactId,
            agent_id: body.agent_id,
            key: body.key,
            mime: body.mime,
            size: body.size,
            ttl_days: body.ttl_days,
            status: 'pending',
            sha256: null,
            object_key: null,
            created_at: createdAt,
            upload_expires_at: upload.expiresAt,
            committed_at: null,
            expires_at: createdAt + body.ttl_days * DAY_MS,
          });
        });
      try {
        await store();
      } catch (error) {
        // Over the quota: what expired or was abandoned still counts until the daily sweep. Purge it now and try once more.
        if (!(error instanceof PayloadTooLargeError) || (await reclaimFor(body.agent_id)) === 0) throw error;
        await store();
      }
      return {
        artifact_id: artifactId,
        upload_url: upload.url,
        upload_expires_at: isoTimestamp(upload.expiresAt),
        upload_headers: upload.headers,
      };
    },

    /**
     * Verifies the uploaded object against the registered size and the caller's
     * SHA-256 and commits the artifact. Committing again with the same hash
     * answers the same; on a mismatch the upload is discarded and the artifact
     * stays pending, so the caller may PUT again while the upload URL lasts.
     * Commits of one artifact run one at a time (see `withCommitLock`), so a
     * retry while the first is hashing gets the first one's answer.
     * @throws NotFoundError; NotAllowedError; ConflictError (409) when expired,
     *   committed with another hash, or another commit holds it for over a
     *   minute; VerificationError (422) when nothing was uploaded or the size
     *   or hash differ.
     */
    async commit(body: CommitRequest, principal: Principal): Promise<CommitResponse> {
      await loadFor(body.artifact_id, principal, 'artifacts.write');
      return withCommitLock(
        deps.lock,
        body.artifact_id,
        () => commitHeld(body),
        (error) =>
          deps.logger.warn(
            { err: error, artifact_id: body.artifact_id },
            'artifacts: could not release a commit lock; it expires on its own',
          ),
      );
    },

    /**
     * Grants `to_agent` downloads of a committed artifact until `expires_at` (ms).
     * The token is in the result and nowhere else (stored as SHA-256).
     * @throws InputError when `expires_at` is not in the future; ConflictError when the
     *   artifact is pending or expired; NotFoundError when the artifact or `to_agent`
     *   does not exist (the recipient is looked up only after the caller's access to
     *   the artifact is established: someone else's artifact answers 404 for the artifact);
     *   NotAllowedError.
     */
    async grant(body: GrantRequest, principal: Principal): Promise<GrantResponse> {
      const row = await loadFor(body.artifact_id, principal, 'artifacts.grant');
      const at = now();
      if (body.expires_at <= at) {
        throw new InputError('expires_at must be in the future.', { fields: [{ path: 'expires_at', message: 'in the past' }] });
      }
      if (row.expires_at <= at) throw new ConflictError(`Artifact "${row.artifact_id}" has expired.`);
      if (row.status !== 'committed')
        throw new ConflictError(`Artifact "${row.artifact_id}" is not committed yet; only committed artifacts can be granted.`);
      if ((await deps.agents.missing({ agentIds: [body.to_agent] })).length > 0) {
        throw new NotFoundError(`Agent "${body.to_agent}" does not exist; grants go to registered agents.`);
      }
      const token = newCredential('g_');
      const grantId = newId('grt_');
      await knex()(GRANTS).insert({
        grant_id: grantId,
        token_hash: hashCredential(token),
        artifact_id: row.artifact_id,
        to_agent: body.to_agent,
        created_at: at,
        expires_at: body.expires_at,
        revoked_at: null,
      });
      return { grant_id: grantId, token, expires_at: isoTimestamp(body.expires_at) };
    },

    /** Ends every live grant of an artifact to `to_agent` (`expires_at` is ignored). @returns `{ revoked }`, the count ended. */
    async revoke(body: RevokeRequest, principal: Principal): Promise<RevokeResponse> {
      const row = await loadFor(body.artifact_id, principal, 'artifacts.grant');
      const revoked = await knex()(GRANTS)
        .where({ artifact_id: row.artifact_id, to_agent: body.to_agent })
        .whereNull('revoked_at')
        .where('expires_at', '>', now())
        .update({ revoked_at: now() });
      return { revoked };
    },

    /**
     * A download URL for the artifact a grant token names, valid for the
     * configured window but never past the grant's or the artifact's expiry.
     * @throws AuthenticationError (401) for an unknown, expired or revoked token;
     *   NotFoundError (404) when the artifact expired or was deleted.
     */
    async fetch(body: FetchRequest): Promise<FetchResponse> {
      const at = now();
      const grant = (await knex()(GRANTS)
        .where({ token_hash: hashCredential(body.grant_token) })
        .first()) as GrantRow | undefined;
      if (!grant || grant.revoked_at !== null || grant.expires_at <= at) {
        throw new AuthenticationError('The grant token is unknown, expired or revoked.');
      }
      const row = await loadRow(grant.artifact_id);
      if (row?.status !== 'committed' || !row.object_key || row.expires_at <= at) {
        throw new NotFoundError('The granted artifact has expired or was deleted.');
      }
      const until = Math.min(at + config.downloadUrlSeconds * 1000, grant.expires_at, row.expires_at);
      const download = await deps.blobStore.createDownloadUrl({
        key: row.object_key,
        expiresInSeconds: Math.max(1, Math.floor((until - at) / 1000)),
        contentType: row.mime,
        filename: filenameOf(row.key),
      });
      return { url: download.url, expires_at: isoTimestamp(download.expiresAt) };
    },

    /**
     * A download URL of a committed artifact for its owner (or a delegation
     * from the owner with `artifacts.read`), valid for the configured window
     * but never past the artifact's expiry; with the artifact's key, mime,
     * size and sha256 so the caller can decide how to read it.
     * @throws NotFoundError (404) for an unknown artifact or another agent's;
     *   ConflictError (409) while it is pending or once it expired.
     */
    async download(body: DownloadRequest, principal: Principal): Promise<DownloadResponse> {
      const row = await loadFor(body.artifact_id, principal, 'artifacts.read');
      const at = now();
      if (row.expires_at <= at) throw new ConflictError(`Artifact "${row.artifact_id}" has expired.`);
      if (row.status !== 'committed' || !row.object_key) {
        throw new ConflictError(`Artifact "${row.artifact_id}" is not committed yet.`);
      }
      const until = Math.min(at + config.downloadUrlSeconds * 1000, row.expires_at);
      const download = await deps.blobStore.createDownloadUrl({
        key: row.object_key,
        expiresInSeconds: Math.max(1, Math.floor((until - at) / 1000)),
        contentType: row.mime,
        filename: filenameOf(row.key),
      });
      return {
        artifact_id: row.artifact_id,
        key: row.key,
        mime: row.mime,
        size: row.size,
        sha256: row.sha256 as string,
        url: download.url,
        expires_at: isoTimestamp(download.expiresAt),
      };
    },

    /**
     * An agent's artifacts whose key starts with `prefix`, newest first, `limit`
     * per page; pass `next_cursor` back as `cursor` for the next page.
     * @throws InputError for a cursor not made by this endpoint.
     */
    async list(body: ListRequest): Promise<ListResponse> {
      const at = now();
      let query = knex()(ITEMS).where({ agent_id: body.agent_id });
      if (body.prefix !== '') query = query.whereRaw('substr(??, 1, ?) = ?', ['key', [...body.prefix].length, body.prefix]);
      if (body.cursor) {
        const cursor = listCursor.decode(body.cursor);
        query = whereAfterKeyset(query, 'desc', ['created_at', cursor.c], ['artifact_id', cursor.i]);
      }
      const rows = (await query
        .orderBy([
          { column: 'created_at', order: 'desc' },
          { column: 'artifact_id', order: 'desc' },
        ])
        .limit(body.limit + 1)) as ArtifactRow[];
      const { page, next_cursor } = keysetPage(rows, body.limit, (last) => listCursor.encode({ c: last.created_at, i: last.artifact_id }));
      return {
        artifacts: page.map((row) => ({
          artifact_id: row.artifact_id,
          key: row.key,
          mime: row.mime,
          size: row.size,
          sha256: row.sha256,
          status: statusOf(row, at),
          created_at: isoTimestamp(row.created_at),
          expires_at: isoTimestamp(row.expires_at),
        })),
        next_cursor,
      };
    },

    /**
     * The daily sweep: deletes expired artifacts and registrations never
     * committed within `abandonPendingAfterSeconds` (objects, grants and rows),
     * and grants that ended more than 7 days ago, then recounts each agent's usage.
     * @param options.signal checked before each batch and each agent's recount (the `artifacts.sweep` job's).
     * @returns counts of what was removed.
     * @throws the signal's reason once it aborted; what was not done is left for the next sweep.
     */
    async sweep(options: { signal?: AbortSignal } = {}): Promise<{ expired: number; abandoned: number; grants: number }> {
      const { signal } = options;
      const at = now();
      const counts = { expired: 0, abandoned: 0, grants: 0 };
      for (;;) {
        signal?.throwIfAborted();
        const rows = (await knex()(ITEMS).select('artifact_id').where('expires_at', '<=', at).limit(SWEEP_BATCH)) as ArtifactRow[];
        counts.expired += await purge(
          rows.map((row) => row.artifact_id),
          at,
        );
        if (rows.length < SWEEP_BATCH) break;
      }
      const abandonBefore = at - config.abandonPendingAfterSeconds * 1000;
      for (;;) {
        signal?.throwIfAborted();
        const rows = (await knex()(ITEMS)
          .select('artifact_id')
          .where({ status: 'pending' })
          .andWhere('created_at', '<=', abandonBefore)
          .limit(SWEEP_BATCH)) as ArtifactRow[];
        counts.abandoned += await purge(
          rows.map((row) => row.artifact_id),
          at,
        );
        if (rows.length < SWEEP_BATCH) break;
      }
      signal?.throwIfAborted();
      const endedBefore = at - RETAIN_ENDED_GRANTS_MS;
      counts.grants = await knex()(GRANTS).where('expires_at', '<', endedBefore).orWhere('revoked_at', '<', endedBefore).delete();
      await recountUsage(signal);
      return counts;
    },

    /**
     * Deletes whatever was PUT to a committed artifact's upload URL (run after the URL expired), also when the
     * artifact was purged meanwhile (no row names those bytes any more); a pending artifact's upload is left.
     * @param options.signal checked before it starts (the `artifacts.upload-cleanup` job's).
     * @throws the signal's reason once it aborted; nothing is deleted, the job's next attempt does it.
     */
    async cleanupUpload(payload: UploadCleanupPayload, options: { signal?: AbortSignal } = {}): Promise<void> {
      options.signal?.throwIfAborted();
      const row = await loadRow(payload.artifact_id);
      if (row !== undefined && row.status !== 'committed') return;
      await deps.blobStore.delete({ keys: [uploadKeyOf(payload.artifact_id)] });
    },

    removePurgedObjects,

    /** Listings across agents for operators (the `/admin/*` routes). */
    admin: createArtifactsAdmin(deps),
  };
  return service;
}

/** The artifacts service. */
export type ArtifactsService = ReturnType<typeof createArtifactsService>;
