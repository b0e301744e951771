import { agentIdSchema, instantSchema, timestampSchema } from '@agentinfra/core';
import { z } from 'zod';
import { artifactKeySchema, keyPrefixSchema } from './artifact-key.js';
import { artifactIdSchema, mimeSchema, sha256Schema } from './field-schemas.js';

/**
 * Request and response bodies of agent-artifacts (SPEC.md §4 agent-artifacts,
 * CONTRACT.md response shapes). The service takes and returns these shapes,
 * so HTTP and library callers see the same thing. Field schemas live in
 * `artifact-key.ts` (keys and prefixes) and `field-schemas.ts` (ids, media
 * types, digests).
 */

/** Artifact status (CONTRACT.md): `expired` is reported once `expires_at` passed, until the sweep deletes the row. */
export const artifactStatusSchema = z.enum(['pending', 'committed', 'expired']);
/** An artifact's status. */
export type ArtifactStatus = z.infer<typeof artifactStatusSchema>;

/** POST /register: `size` in bytes (at most the configured maximum, 413 above); `ttl_days` 1..3650, default 30. */
export const registerRequestSchema = z.strictObject({
  agent_id: agentIdSchema,
  key: artifactKeySchema,
  mime: mimeSchema,
  size: z.number().int().min(1).max(Number.MAX_SAFE_INTEGER),
  ttl_days: z.number().int().min(1).max(3650).default(30),
});
export type RegisterRequest = z.output<typeof registerRequestSchema>;
/** Where to PUT the bytes, until when, and the headers the PUT must carry. */
export const registerResponseSchema = z.object({
  artifact_id: z.string(),
  upload_url: z.string(),
  upload_expires_at: instantSchema,
  upload_headers: z.record(z.string(), z.string()),
});
export type RegisterResponse = z.output<typeof registerResponseSchema>;

/** POST /commit: the SHA-256 of the uploaded bytes (hex, normalised to lower case). */
export const commitRequestSchema = z.strictObject({ artifact_id: artifactIdSchema, sha256: sha256Schema });
export type CommitRequest = z.output<typeof commitRequestSchema>;
/** The committed artifact. */
export const commitResponseSchema = z.object({
  artifact_id: z.string(),
  status: z.literal('committed'),
  size: z.number(),
  sha256: z.string(),
});
export type CommitResponse = z.output<typeof commitResponseSchema>;

/** POST /grant: downloads of `artifact_id` for `to_agent` until `expires_at`. */
export const grantRequestSchema = z.strictObject({ artifact_id: artifactIdSchema, to_agent: agentIdSchema, expires_at: timestampSchema });
export type GrantRequest = z.output<typeof grantRequestSchema>;
/** The grant and its `g_…` token, returned this once. */
export const grantResponseSchema = z.object({ grant_id: z.string(), token: z.string(), expires_at: instantSchema });
export type GrantResponse = z.output<typeof grantResponseSchema>;

/** POST /revoke: the grants of `artifact_id` to `to_agent` (`expires_at` is accepted and ignored). */
export const revokeRequestSchema = z.strictObject({
  artifact_id: artifactIdSchema,
  to_agent: agentIdSchema,
  expires_at: timestampSchema.optional(),
});
export type RevokeRequest = z.output<typeof revokeRequestSchema>;
/** How many live grants were ended. */
export const revokeResponseSchema = z.object({ revoked: z.number() });
export type RevokeResponse = z.output<typeof revokeResponseSchema>;

/** POST /fetch: a grant token, the only credential. */
export const fetchRequestSchema = z.strictObject({ grant_token: z.string().min(1).max(256) });
export type FetchRequest = z.output<typeof fetchRequestSchema>;
/** A short-lived signed download URL. */
export const fetchResponseSchema = z.object({ url: z.string(), expires_at: instantSchema });
export type FetchResponse = z.output<typeof fetchResponseSchema>;

/** POST /download: one of the caller's own committed artifacts. */
export const downloadRequestSchema = z.strictObject({ artifact_id: artifactIdSchema });
export type DownloadRequest = z.output<typeof downloadRequestSchema>;
/** A short-lived signed download URL with the artifact's key, mime, size and sha256. */
export const downloadResponseSchema = z.object({
  artifact_id: z.string(),
  key: z.string(),
  mime: z.string(),
  size: z.number(),
  sha256: z.string(),
  url: z.string(),
  expires_at: instantSchema,
});
export type DownloadResponse = z.output<typeof downloadResponseSchema>;

/** POST /list: keys starting with `prefix` (default all), `limit` 1..500 (default 50), `cursor` from the previous page. */
export const listRequestSchema = z.strictObject({
  agent_id: agentIdSchema,
  prefix: keyPrefixSchema.default(''),
  limit: z.number().int().min(1).max(500).default(50),
  cursor: z.string().max(512).nullable().optional(),
});
export type ListRequest = z.output<typeof listRequestSchema>;
/** One artifact in a /list page. */
export const artifactViewSchema = z.object({
  artifact_id: z.string(),
  key: z.string(),
  mime: z.string(),
  size: z.number(),
  sha256: z.string().nullable(),
  status: artifactStatusSchema,
  created_at: instantSchema,
  expires_at: instantSchema,
});
export type ArtifactView = z.output<typeof artifactViewSchema>;
/** A page of artifacts, newest first; `next_cursor` is null on the last page. */
export const listResponseSchema = z.object({ artifacts: z.array(artifactViewSchema), next_cursor: z.string().nullable() });
export type ListResponse = z.output<typeof listResponseSchema>;

/** Payload of the `artifacts.upload-cleanup` queue job, enqueued by /commit. */
export const uploadCleanupPayloadSchema = z.object({ artifact_id: z.string().min(1) });
export type UploadCleanupPayload = z.output<typeof uploadCleanupPayloadSchema>;
