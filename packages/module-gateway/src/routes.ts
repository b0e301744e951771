import { routesFor } from '@agentinfra/core';
import type { GatewayPermission } from './permissions.js';
import {
  agentHostRequestSchema,
  claimHostResponseSchema,
  getCertificateResponseSchema,
  issueCertificateRequestSchema,
  listHostsRequestSchema,
  listHostsResponseSchema,
  orderSummarySchema,
  releaseHostResponseSchema,
  renewCertificatesRequestSchema,
  renewCertificatesResponseSchema,
  reportIpsRequestSchema,
  reportIpsResponseSchema,
} from './schemas.js';
import type { GatewayService } from './service.js';

const route = routesFor<GatewayService, GatewayPermission>();

/** agent-gateway routes (SPEC.md §4 agent-gateway, CONTRACT.md shapes and auth, plus /cert/get). */
export const gatewayRoutes = [
  route({
    path: '/host/claim',
    summary:
      'Bind a hostname to an agent once the TXT record _agentinfra-challenge.<host> holds the token this call hands out (422 until then).',
    description:
      'Bind a hostname to the agent after proving DNS control: the first call answers verification_failed with the TXT record name and value to publish in details; publish it, then call again. Returns host, agent_id, status bound and bound_at.',
    effects: { idempotent: true, openWorld: true },
    audit: { action: 'host.claim', target: (body) => `host:${body.host}` },
    request: agentHostRequestSchema,
    response: claimHostResponseSchema,
    auth: { kind: 'agent', permission: 'gateway.write', agents: (body) => [body.agent_id] },
    handler: ({ body, service }) => service.claimHost(body),
  }),
  route({
    path: '/host/release',
    summary: 'Unbind a hostname; its certificate is revoked at the CA in the background.',
    description:
      'Unbind a hostname from the agent; its certificate is revoked at the CA in the background. Returns host, released_at and whether a revocation was scheduled.',
    effects: { destructive: true, idempotent: true, openWorld: true },
    audit: { action: 'host.release', target: (body) => `host:${body.host}` },
    request: agentHostRequestSchema,
    response: releaseHostResponseSchema,
    auth: { kind: 'agent', permission: 'gateway.write', agents: (body) => [body.agent_id] },
    handler: ({ body, service }) => service.releaseHost(body),
  }),
  route({
    path: '/cert/issue',
    summary: 'Force an ACME order for a bound host (runs in the background; /list shows its progress).',
    description:
      'Force an ACME certificate order for a bound host (operators only, with the bridge key); it runs in the background. Returns the order’s id and status.',
    effects: { openWorld: true },
    audit: { action: 'certificate.issue', target: (body) => `host:${body.host}` },
    request: issueCertificateRequestSchema,
    response: orderSummarySchema,
    auth: { kind: 'bridge' },
    handler: ({ body, service }) => service.issueCertificate(body),
  }),
  route({
    path: '/cert/renew',
    summary: 'Force a renewal order for one host, or with {} order every certificate with under a third of its lifetime left.',
    description:
      'Force a renewal order for one host, or for every certificate with under a third of its lifetime left (operators only, with the bridge key). Returns the orders.',
    effects: { openWorld: true },
    audit: { action: 'certificate.renew', target: (body) => `host:${body.host ?? '*'}` },
    request: renewCertificatesRequestSchema,
    response: renewCertificatesResponseSchema,
    auth: { kind: 'bridge' },
    handler: ({ body, service }) => service.renewCertificates(body),
  }),
  route({
    path: '/cert/get',
    summary: 'The certificate chain and private key of a host, for the agent it is bound to (to terminate TLS itself).',
    description:
      'The certificate chain and private key of a hostname bound to the agent, to terminate TLS itself. The private key is secret: install it, do not repeat it. Returns PEMs, validity and serial.',
    effects: { readOnly: true, idempotent: true },
    audit: { action: 'certificate.get', target: (body) => `host:${body.host}` },
    request: agentHostRequestSchema,
    response: getCertificateResponseSchema,
    auth: { kind: 'agent', permission: 'gateway.read', agents: (body) => [body.agent_id] },
    handler: ({ body, service }) => service.getCertificate(body),
  }),
  route({
    path: '/ip/report',
    summary: 'Replace the IP addresses of a bound host (validated, normalised, deduplicated).',
    description:
      'Replace the IP addresses recorded for a bound host (operators only, with the bridge key). Returns host and the normalised ips.',
    effects: { destructive: true, idempotent: true },
    request: reportIpsRequestSchema,
    response: reportIpsResponseSchema,
    auth: { kind: 'bridge' },
    handler: ({ body, service }) => service.reportIps(body),
  }),
  route({
    path: '/list',
    summary: 'Bound hosts with certificate expiry, status and IP addresses (optionally one agent’s).',
    description:
      'Bound hosts with certificate expiry, status and IP addresses, optionally one agent’s (operators only, with the bridge key).',
    effects: { readOnly: true, idempotent: true },
    request: listHostsRequestSchema,
    response: listHostsResponseSchema,
    auth: { kind: 'bridge' },
    handler: ({ body, service }) => service.list(body),
  }),
];
