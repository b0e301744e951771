import type { EnvBinding } from '@agentinfra/core';
import { z } from 'zod';

/** The `identity` section of the config. */
export const identityConfigSchema = z.object({
  /** Lifetime of a device key in days (CONTRACT.md default 90). */
  deviceKeyTtlDays: z.number().int().min(1).max(3650).default(90),
  /** Longest delegation lifetime in days; a later `expires_at` is refused with 400. */
  maxDelegationDays: z.number().int().min(1).max(3650).default(365),
  /**
   * Milliseconds a verified device key or delegation token is answered from
   * this process's memory (0 = every request reads the database). A
   * revocation takes effect at once in the process that handles it; other
   * replicas on the same database see it at most this long afterwards.
   */
  credentialCacheMs: z.number().int().min(0).max(300_000).default(5_000),
});
export type IdentityConfig = z.output<typeof identityConfigSchema>;

/** Environment variables of the identity section. */
export const identityEnv: readonly EnvBinding[] = [
  { name: 'AGENTINFRA_DEVICE_KEY_TTL_DAYS', path: ['deviceKeyTtlDays'], type: 'integer' },
  { name: 'AGENTINFRA_CREDENTIAL_CACHE_MS', path: ['credentialCacheMs'], type: 'integer' },
];
