import { agentIdSchema, routesFor } from '@agentinfra/core';
import { z } from 'zod';
import { hostnameSchema } from './hostname.js';
import { ipListSchema } from './ip-addresses.js';
import type { GatewayService } from './service.js';

const route = routesFor<GatewayService>();
const iso = z.string();
const orderStatus = z.enum(['queued', 'processing', 'valid', 'failed', 'cancelled']);
const orderSummary = z.object({ host: z.string(), order_id: z.string(), status: orderStatus });

/** agent-gateway routes (SPEC.md §4 agent-gateway, CONTRACT.md shapes and auth, plus /cert/get). */
export const gatewayRoutes = [
  route({
    path: '/host/claim',
    summary:
      'Bind a hostname to an agent once the TXT record _agentinfra-challenge.<host> holds the token this call hands out (422 until then).',
    request: z.strictObject({ agent_id: agentIdSchema, host: hostnameSchema }),
    response: z.object({ host: z.string(), agent_id: z.string(), status: z.literal('bound'), host_id: z.string(), bound_at: iso }),
    auth: { kind: 'agent', permission: 'gateway.write', agents: (body) => [body.agent_id] },
    handler: ({ body, service }) => service.claimHost({ agentId: body.agent_id, host: body.host }),
  }),
  route({
    path: '/host/release',
    summary: 'Unbind a hostname; its certificate is revoked at the CA in the background.',
    request: z.strictObject({ agent_id: agentIdSchema, host: hostnameSchema }),
    response: z.object({ host: z.string(), released_at: iso, certificate_revocation: z.enum(['scheduled', 'none']) }),
    auth: { kind: 'agent', permission: 'gateway.write', agents: (body) => [body.agent_id] },
    handler: ({ body, service }) => service.releaseHost({ agentId: body.agent_id, host: body.host }),
  }),
  route({
    path: '/cert/issue',
    summary: 'Force an ACME order for a bound host (runs in the background; /list shows its progress).',
    request: z.strictObject({ host: hostnameSchema }),
    response: orderSummary,
    auth: { kind: 'bridge' },
    handler: ({ body, service }) => service.issueCertificate({ host: body.host }),
  }),
  route({
    path: '/cert/renew',
    summary: 'Force a renewal order for one host, or with {} order every certificate with under a third of its lifetime left.',
    request: z.strictObject({ host: hostnameSchema.optional() }),
    response: z.object({ orders: z.array(orderSummary) }),
    auth: { kind: 'bridge' },
    handler: ({ body, service }) => service.renewCertificates({ host: body.host }),
  }),
  route({
    path: '/cert/get',
    summary: 'The certificate chain and private key of a host, for the agent it is bound to (to terminate TLS itself).',
    request: z.strictObject({ agent_id: agentIdSchema, host: hostnameSchema }),
    response: z.object({
      host: z.string(),
      certificate_pem: z.string(),
      private_key_pem: z.string(),
      not_before: iso,
      not_after: iso,
      serial: z.string(),
    }),
    auth: { kind: 'agent', permission: 'gateway.read', agents: (body) => [body.agent_id] },
    handler: ({ body, service }) => service.getCertificate({ agentId: body.agent_id, host: body.host }),
  }),
  route({
    path: '/ip/report',
    summary: 'Replace the IP addresses of a bound host (validated, normalised, deduplicated).',
    request: z.strictObject({ host: hostnameSchema, ips: ipListSchema }),
    response: z.object({ host: z.string(), ips: z.array(z.string()) }),
    auth: { kind: 'bridge' },
    handler: ({ body, service }) => service.reportIps({ host: body.host, ips: body.ips }),
  }),
  route({
    path: '/list',
    summary: 'Bound hosts with certificate expiry, status and IP addresses (optionally one agent’s).',
    request: z.strictObject({ agent_id: agentIdSchema.optional() }),
    response: z.object({
      hosts: z.array(
        z.object({
          host: z.string(),
          agent_id: z.string(),
          cert_expires_at: iso.nullable(),
          days_remaining: z.number().int().nullable(),
          ips: z.array(z.string()),
          bound_at: iso,
          cert_status: z.enum(['none', 'pending', 'valid', 'renewing', 'expired', 'failed']),
          cert_serial: z.string().nullable(),
          order: z
            .object({
              order_id: z.string(),
              status: orderStatus,
              attempts: z.number().int(),
              error: z.string().nullable(),
              problem: z.unknown(),
              updated_at: iso,
            })
            .nullable(),
        }),
      ),
    }),
    auth: { kind: 'bridge' },
    handler: ({ body, service }) => service.list({ agentId: body.agent_id }),
  }),
];
