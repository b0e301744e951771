import { agentIdSchema, routesFor, timestampSchema } from '@agentinfra/core';
import { z } from 'zod';
import { artifactKeySchema, keyPrefixSchema } from './artifact-key.js';
import { artifactIdSchema, mimeSchema, sha256Schema } from './field-schemas.js';
import type { ArtifactsService } from './service.js';

const route = routesFor<ArtifactsService>();
const iso = z.string();
const grantTarget = {
  artifact_id: artifactIdSchema,
  to_agent: agentIdSchema,
};

/** agent-artifacts routes (SPEC.md §4 agent-artifacts, CONTRACT.md response shapes). */
export const artifactsRoutes = [
  route({
    path: '/register',
    summary: 'Register an artifact; PUT exactly `size` bytes to the returned upload_url, then /commit.',
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
      upload_expires_at: iso,
      upload_headers: z.record(z.string(), z.string()),
    }),
    auth: { kind: 'agent', permission: 'artifacts.write', agents: (body) => [body.agent_id] },
    handler: ({ body, service }) =>
      service.register({ agentId: body.agent_id, key: body.key, mime: body.mime, size: body.size, ttlDays: body.ttl_days }),
  }),
  route({
    path: '/commit',
    summary: 'Verify the uploaded bytes (size and SHA-256) and commit the artifact.',
    request: z.strictObject({ artifact_id: artifactIdSchema, sha256: sha256Schema }),
    response: z.object({ artifact_id: z.string(), status: z.literal('committed'), size: z.number(), sha256: z.string() }),
    auth: { kind: 'any' },
    handler: ({ body, service, principal }) => service.commit({ artifactId: body.artifact_id, sha256: body.sha256, principal: principal! }),
  }),
  route({
    path: '/grant',
    summary: 'Let another agent fetch a committed artifact until expires_at; returns a g_ grant token once.',
    request: z.strictObject({ ...grantTarget, expires_at: timestampSchema }),
    response: z.object({ grant_id: z.string(), token: z.string(), expires_at: iso }),
    auth: { kind: 'any' },
    handler: ({ body, service, principal }) =>
      service.grant({ artifactId: body.artifact_id, toAgent: body.to_agent, expiresAt: body.expires_at, principal: principal! }),
  }),
  route({
    path: '/revoke',
    summary: 'End every live grant of the artifact to to_agent (expires_at is accepted and ignored).',
    request: z.strictObject({ ...grantTarget, expires_at: timestampSchema.optional() }),
    response: z.object({ revoked: z.number() }),
    auth: { kind: 'any' },
    handler: ({ body, service, principal }) =>
      service.revoke({ artifactId: body.artifact_id, toAgent: body.to_agent, principal: principal! }),
  }),
  route({
    path: '/fetch',
    summary: 'Exchange a grant token for a short-lived signed download URL (no other credential).',
    request: z.strictObject({ grant_token: z.string().min(1).max(256) }),
    response: z.object({ url: z.string(), expires_at: iso }),
    auth: { kind: 'none' },
    handler: ({ body, service }) => service.fetch({ grantToken: body.grant_token }),
  }),
  route({
    path: '/list',
    summary: 'List an agent’s artifacts by key prefix, newest first, with status and expiry.',
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
          created_at: iso,
          expires_at: iso,
        }),
      ),
      next_cursor: z.string().nullable(),
    }),
    auth: { kind: 'agent', permission: 'artifacts.read', agents: (body) => [body.agent_id] },
    handler: ({ body, service }) => service.list({ agentId: body.agent_id, prefix: body.prefix, limit: body.limit, cursor: body.cursor }),
  }),
];
