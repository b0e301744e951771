import { agentIdSchema, instantSchema } from '@agentinfra/core';
import { z } from 'zod';
import { hostViewSchema, orderStatusSchema } from './host-view.js';
import { hostnameSchema } from './hostname.js';
import { ipListSchema } from './ip-addresses.js';

/**
 * Request and response bodies of agent-gateway (SPEC.md §4 agent-gateway,
 * CONTRACT.md shapes, plus /cert/get). The service takes and returns these
 * shapes, so HTTP and library callers see the same thing. Field schemas live
 * in `hostname.ts`, `ip-addresses.ts` and `host-view.ts`.
 */

/** POST /host/claim, /host/release and /cert/get: a hostname (normalised to lower case) of an agent. */
export const agentHostRequestSchema = z.strictObject({ agent_id: agentIdSchema, host: hostnameSchema });
export type AgentHostRequest = z.output<typeof agentHostRequestSchema>;

/** A host bound to the agent (the answer to a claim, again and again once bound). */
export const claimHostResponseSchema = z.object({
  host: z.string(),
  agent_id: z.string(),
  status: z.literal('bound'),
  host_id: z.string(),
  bound_at: instantSchema,
});
export type ClaimHostResponse = z.output<typeof claimHostResponseSchema>;

/** A released host and whether the revocation of its certificate was scheduled. */
export const releaseHostResponseSchema = z.object({
  host: z.string(),
  released_at: instantSchema,
  certificate_revocation: z.enum(['scheduled', 'none']),
});
export type ReleaseHostResponse = z.output<typeof releaseHostResponseSchema>;

/** An ACME order as /cert/issue and /cert/renew report it. */
export const orderSummarySchema = z.object({ host: z.string(), order_id: z.string(), status: orderStatusSchema });
export type OrderSummary = z.output<typeof orderSummarySchema>;

/** POST /cert/issue (bridge key): a bound host. */
export const issueCertificateRequestSchema = z.strictObject({ host: hostnameSchema });
export type IssueCertificateRequest = z.output<typeof issueCertificateRequestSchema>;

/** POST /cert/renew (bridge key): one host, or none for every certificate with under a third of its lifetime left. */
export const renewCertificatesRequestSchema = z.strictObject({ host: hostnameSchema.optional() });
export type RenewCertificatesRequest = z.output<typeof renewCertificatesRequestSchema>;
/** The orders placed (or already live). */
export const renewCertificatesResponseSchema = z.object({ orders: z.array(orderSummarySchema) });
export type RenewCertificatesResponse = z.output<typeof renewCertificatesResponseSchema>;

/** A host's certificate chain and private key (secret), with validity and serial. */
export const getCertificateResponseSchema = z.object({
  host: z.string(),
  certificate_pem: z.string(),
  private_key_pem: z.string(),
  not_before: instantSchema,
  not_after: instantSchema,
  serial: z.string(),
});
export type GetCertificateResponse = z.output<typeof getCertificateResponseSchema>;

/** POST /ip/report (bridge key): the host's IP addresses, normalised, deduplicated and sorted by the schema. */
export const reportIpsRequestSchema = z.strictObject({ host: hostnameSchema, ips: ipListSchema });
export type ReportIpsRequest = z.output<typeof reportIpsRequestSchema>;
/** The host and the IP addresses stored. */
export const reportIpsResponseSchema = z.object({ host: z.string(), ips: z.array(z.string()) });
export type ReportIpsResponse = z.output<typeof reportIpsResponseSchema>;

/** POST /list (bridge key): every bound host, or one agent's. */
export const listHostsRequestSchema = z.strictObject({ agent_id: agentIdSchema.optional() });
export type ListHostsRequest = z.output<typeof listHostsRequestSchema>;
/** Bound hosts in name order with certificate expiry, status, IPs and latest order. */
export const listHostsResponseSchema = z.object({ hosts: z.array(hostViewSchema) });
export type ListHostsResponse = z.output<typeof listHostsResponseSchema>;
