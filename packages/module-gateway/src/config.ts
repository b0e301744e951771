import type { EnvBinding } from '@agentinfra/core';
import { z } from 'zod';
import { parseDnsServer } from './dns01/dns-transport.js';
import { rfc2136OptionsSchema } from './dns01/rfc2136-provider.js';

/** Let's Encrypt's staging directory: the default, so that a fresh install never burns production rate limits. */
export const LETS_ENCRYPT_STAGING = 'https://acme-staging-v02.api.letsencrypt.org/directory';

const dnsServerSchema = z.string().refine((value) => {
  try {
    parseDnsServer(value);
    return true;
  } catch {
    return false;
  }
}, 'must be host:port, [v6]:port or a bare address');

/** Private key types for certificates (ECDSA P-256 by default, as certbot and Caddy do). */
export const certificateKeyTypeSchema = z.enum(['ecdsa-p256', 'ecdsa-p384', 'rsa-2048', 'rsa-3072', 'rsa-4096']);
export type CertificateKeyType = z.infer<typeof certificateKeyTypeSchema>;

/** The `gateway` section of the config. */
export const gatewayConfigSchema = z.object({
  /** ACME directory URL (Let's Encrypt, ZeroSSL, pebble, any RFC 8555 CA). */
  directoryUrl: z.url().default(LETS_ENCRYPT_STAGING),
  /** PEM file of extra CAs trusted for the ACME server's own HTTPS (e.g. pebble's); used for that server's origin only. */
  caFile: z.string().min(1).optional(),
  /** ACME account contact e-mail. */
  email: z.email().optional(),
  /** Challenge type for orders. */
  challenge: z.enum(['http-01', 'dns-01']).default('http-01'),
  /** Port of the HTTP-01 challenge listener; 0 turns it off (another replica or a proxy serves the tokens). */
  httpPort: z.number().int().min(0).max(65535).default(80),
  /** Bind address of the HTTP-01 listener; the API's `host` (core config, `AGENTINFRA_HOST`) when left out. */
  httpHost: z.string().min(1).optional(),
  /** Resolvers for the /host/claim TXT check, `host:port`; the system's when empty. */
  dnsServers: z.array(dnsServerSchema).default([]),
  /** External Account Binding (ZeroSSL, Google, some Let's Encrypt setups). `hmacKey` is base64url as the CA shows it. */
  eab: z.object({ kid: z.string().min(1), hmacKey: z.string().min(1) }).optional(),
  /** Private key type of issued certificates. */
  keyType: certificateKeyTypeSchema.default('ecdsa-p256'),
  /** Days a /host/claim TXT token stays valid. */
  claimTokenTtlDays: z.number().int().min(1).max(365).default(7),
  /** Attempts per order (the job runner retries with exponential back-off and jitter). */
  orderMaxAttempts: z.number().int().min(1).max(50).default(6),
  /** Milliseconds one order attempt may take before it is aborted and retried. */
  orderTimeoutMs: z.number().int().min(1_000).max(3_600_000).default(600_000),
  /** First delay when polling the CA for a status change, ms (doubles up to `acmePollMaxMs`). */
  acmePollMinMs: z.number().int().min(10).max(60_000).default(1_000),
  acmePollMaxMs: z.number().int().min(10).max(300_000).default(10_000),
  /** Milliseconds one request to the ACME server may go unanswered before the attempt fails (and is retried later). */
  acmeRequestTimeoutMs: z.number().int().min(100).max(300_000).default(30_000),
  /** Polls of one status before the attempt fails. */
  acmePollAttempts: z.number().int().min(1).max(100).default(15),
  /** DNS-01: milliseconds to wait until the challenge TXT is visible through `dnsServers` (0: do not wait). */
  dnsPropagationTimeoutMs: z.number().int().min(0).max(3_600_000).default(120_000),
  /** DNS-01 through RFC 2136 dynamic update with TSIG (the built-in DNS provider). */
  rfc2136: rfc2136OptionsSchema.optional(),
});
/** The validated `gateway` config section. */
export type GatewayConfig = z.output<typeof gatewayConfigSchema>;
/** The `gateway` section as written in `agentinfra.config.json` (every field optional). */
export type GatewayConfigInput = z.input<typeof gatewayConfigSchema>;

/** Environment variables of the gateway section (CONTRACT.md "Running it", plus additions). */
export const gatewayEnv: readonly EnvBinding[] = [
  { name: 'AGENTINFRA_ACME_DIRECTORY_URL', path: ['directoryUrl'], type: 'string' },
  { name: 'AGENTINFRA_ACME_CA_FILE', path: ['caFile'], type: 'string' },
  { name: 'AGENTINFRA_ACME_EMAIL', path: ['email'], type: 'string' },
  { name: 'AGENTINFRA_ACME_CHALLENGE', path: ['challenge'], type: 'string' },
  { name: 'AGENTINFRA_ACME_HTTP_PORT', path: ['httpPort'], type: 'integer' },
  { name: 'AGENTINFRA_ACME_HTTP_HOST', path: ['httpHost'], type: 'string' },
  { name: 'AGENTINFRA_DNS_SERVERS', path: ['dnsServers'], type: 'list' },
  { name: 'AGENTINFRA_ACME_EAB_KID', path: ['eab', 'kid'], type: 'string' },
  { name: 'AGENTINFRA_ACME_EAB_HMAC_KEY', path: ['eab', 'hmacKey'], type: 'string' },
  { name: 'AGENTINFRA_ACME_KEY_TYPE', path: ['keyType'], type: 'string' },
  { name: 'AGENTINFRA_DNS01_RFC2136_SERVER', path: ['rfc2136', 'server'], type: 'string' },
  { name: 'AGENTINFRA_DNS01_RFC2136_ZONE', path: ['rfc2136', 'zone'], type: 'string' },
  { name: 'AGENTINFRA_DNS01_RFC2136_KEY_NAME', path: ['rfc2136', 'keyName'], type: 'string' },
  { name: 'AGENTINFRA_DNS01_RFC2136_KEY_ALGORITHM', path: ['rfc2136', 'keyAlgorithm'], type: 'string' },
  { name: 'AGENTINFRA_DNS01_RFC2136_KEY_SECRET', path: ['rfc2136', 'keySecret'], type: 'string' },
];
