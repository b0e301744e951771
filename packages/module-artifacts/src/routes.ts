import { agentIdSchema, instantSchema, routesFor, timestampSchema } from '@agentinfra/core';
import { z } from 'zod';
import { artifactKeySchema, keyPrefixSchema } from './artifact-key.js';
import { artifactIdSchema, mimeSchema, sha256Schema } from './field-schemas.js';
import type { ArtifactsPermission } from './permissions.js';
import type { ArtifactsService } from './service.js';

const route = routesFor<ArtifactsService, ArtifactsPermission>();
const grantTarget = {
  artifact_id: artifactIdSchema,
  to_agent: agentIdSchema,
};

/** agent-artifacts routes (SPEC.md §4 agent-artifacts, CONTRACT.md response shapes). */
export const artifactsRoutes = [
  route({
    path: '/register',
    summary: 'Register an artifact; PUT exactly `size` bytes to the returned upload_url, then /commit.',
    description:
      'Start storing a file: declare its key (path-like name), media type, exact size in bytes and lifetime. Then PUT exactly `size` bytes to the returned upload_url with upload_headers (over MCP: the artifacts_upload tool), then /commit with the SHA-256. Returns artifact_id, upload_url, upload_expires_at and upload_headers.',
    effects: {},
    request: z.strictObject({
      agent_id: agentIdSchema,
      key: artifactKeySchema,
      mime: mimeSchema,
      size: z.number().int().min(1).max(Number.MAX_SAFE_INTEGER),
      ttl_days: z.number().int().min(1).max(3650).default(30),
    }),
    response: z.object({
      artifact_id: z.string(),
      upload_url: z.string(),
      upload_expires_at: instantSchema,
      upload_headers: z.record(z.string(), z.string()),
    }),
    auth: { kind: 'agent', permission: 'artifacts.write', agents: (body) => [body.agent_id] },
    handler: ({ body, service }) =>
      service.register({ agentId: body.agent_id, key: body.key, mime: body.mime, size: body.size, ttlDays: body.ttl_days }),
  }),
  route({
    path: '/commit',
    summary: 'Verify the uploaded bytes (size and SHA-256) and commit the artifact.',
    description:
      'Finish storing a file: the server checks the uploaded bytes against the registered size and the given SHA-256 (hex) and commits the artifact. Committing again with the same hash answers the same. Returns artifact_id, status committed, size and sha256; verification_failed when the bytes differ.',
    effects: { idempotent: true },
    request: z.strictObject({ artifact_id: artifactIdSchema, sha256: sha256Schema }),
    response: z.object({ artifact_id: z.string(), status: z.literal('committed'), size: z.number(), sha256: z.string() }),
    auth: { kind: 'any', permission: 'artifacts.write' },
    handler: ({ body, service, principal }) => service.commit({ artifactId: body.artifact_id, sha256: body.sha256, principal: principal! }),
  }),
  route({
    path: '/grant',
    summary: 'Let another agent fetch a committed artifact until expires_at; returns a g_ grant token once.',
    description:
      'Let another agent download one of your committed artifacts until expires_at. Returns grant_id and a g_ grant token (shown once) to hand to that agent, which passes it to /fetch.',
    effects: {},
    request: z.strictObject({ ...grantTarget, expires_at: timestampSchema }),
    response: z.object({ grant_id: z.string(), token: z.string(), expires_at: instantSchema }),
    auth: { kind: 'any', permission: 'artifacts.grant' },
    handler: ({ body, service, principal }) =>
      service.grant({ artifactId: body.artifact_id, toAgent: body.to_agent, expiresAt: body.expires_at, principal: principal! }),
  }),
  route({
    path: '/revoke',
    summary: 'End every live grant of the artifact to to_agent (expires_at is accepted and ignored).',
    description: 'End every live grant of an artifact to an agent at once. Returns how many grants were ended.',
    effects: { destructive: true, idempotent: true },
    request: z.strictObject({ ...grantTarget, expires_at: timestampSchema.optional() }),
    response: z.object({ revoked: z.number() }),
    auth: { kind: 'any', permission: 'artifacts.grant' },
    handler: ({ body, service, principal }) =>
      service.revoke({ artifactId: body.artifact_id, toAgent: body.to_agent, principal: principal! }),
  }),
  route({
    path: '/fetch',
    summary: 'Exchange a grant token for a short-lived signed download URL (no other credential).',
    description:
      'Exchange a grant token another agent gave you for a short-lived signed download URL of the shared artifact (no other credential needed). Returns url and expires_at.',
    effects: { readOnly: true, idempotent: true },
    request: z.strictObject({ grant_token: z.string().min(1).max(256) }),
    response: z.object({ url: z.string(), expires_at: instantSchema }),
    auth: { kind: 'none' },
    handler: ({ body, service }) => service.fetch({ grantToken: body.grant_token }),
  }),
  route({
    path: '/download',
    summary: 'A short-lived signed download URL of one of the caller’s own committed artifacts, with its key, mime, size and sha256.',
    description:
      'Read back a file you stored: returns a short-lived signed URL to GET the committed artifact, with its key, mime, size and sha256 and the URL’s expires_at. Conflict while it is pending or once it expired.',
    effects: { readOnly: true, idempotent: true },
    request: z.strictObject({ artifact_id: artifactIdSchema }),
    response: z.object({
      artifact_id: z.string(),
      key: z.string(),
      mime: z.string(),
      size: z.number(),
      sha256: z.string(),
      url: z.string(),
      expires_at: instantSchema,
    }),
    auth: { kind: 'any', permission: 'artifacts.read' },
    handler: ({ body, service, principal }) => service.download({ artifactId: body.artifact_id, principal: principal! }),
  }),
  route({
    path: '/list',
    summary: 'List an agent’s artifacts by key prefix, newest first, with status and expiry.',
    description:
      'List the agent’s artifacts whose key starts with `prefix`, newest first, with status (pending, committed, expired), size, sha256 and expiry. Pass next_cursor back as `cursor` for the next page.',
    effects: { readOnly: true, idempotent: true },
    request: z.strictObject({
      agent_id: agentIdSchema,
      prefix: keyPrefixSchema.default(''),
      limit: z.number().int().min(1).max(500).default(50),
      cursor: z.string().max(512).nullable().optional(),
    }),
    response: z.object({
      artifacts: z.array(
        z.object({
          artifact_id: z.string(),
          key: z.string(),
          mime: z.string(),
          size: z.number(),
          sha256: z.string().nullable(),
          status: z.enum(['pending', 'committed', 'expired']),
          created_at: instantSchema,
          expires_at: instantSchema,
        }),
      ),
      next_cursor: z.string().nullable(),
    }),
    auth: { kind: 'agent', permission: 'artifacts.read', agents: (body) => [body.agent_id] },
    handler: ({ body, service }) => service.list({ agentId: body.agent_id, prefix: body.prefix, limit: body.limit, cursor: body.cursor }),
  }),
];
