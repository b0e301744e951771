import type { EnvBinding } from '@agentinfra/core';
import { z } from 'zod';
import { addressPoolProblem } from './address-pool.js';

/** Every rule a pair can hold: each TCP and UDP port, and ICMP. */
const MAX_ACLS_OF_A_PAIR = 2 * 65_535 + 1;

/** The `mesh` section of the config. */
export const meshConfigSchema = z.object({
  /**
   * Prefix mesh addresses are allocated from (IPv4 or IPv6 CIDR, network
   * address form). Default `100.64.0.0/10`, the CGNAT range Tailscale uses.
   * Changing it later leaves existing peers their addresses.
   */
  prefix: z
    .string()
    .default('100.64.0.0/10')
    .superRefine((value, ctx) => {
      const problem = addressPoolProblem(value);
      if (problem) ctx.addIssue({ code: 'custom', message: problem });
    }),
  /** A peer shows `online` in /netmap while its `last_seen` is at most this many seconds old. */
  onlineWindowSeconds: z.number().int().min(1).max(86_400).default(120),
  /** `PersistentKeepalive` of every `[Peer]` in /wg_config, in seconds; 0 leaves the line out. */
  keepaliveSeconds: z.number().int().min(0).max(65_535).default(25),
  /**
   * Most ACLs one pair `(from_agent, to_agent)` may hold; /acl/put of a new
   * rule beyond it answers 409. The top of the range (every TCP and UDP port
   * and ICMP) leaves the pair uncapped.
   */
  maxAclsPerPair: z.number().int().min(1).max(MAX_ACLS_OF_A_PAIR).default(256),
});
/** The validated `mesh` config section. */
export type MeshConfig = z.output<typeof meshConfigSchema>;
/** The `mesh` config section as written in `agentinfra.config.json` (every field optional). */
export type MeshConfigInput = z.input<typeof meshConfigSchema>;

/** Environment variables of the mesh section (CONTRACT.md "Running it"). */
export const meshEnv: readonly EnvBinding[] = [
  { name: 'AGENTINFRA_MESH_PREFIX', path: ['prefix'], type: 'string' },
  { name: 'AGENTINFRA_MESH_ONLINE_WINDOW_SECONDS', path: ['onlineWindowSeconds'], type: 'integer' },
  { name: 'AGENTINFRA_MESH_KEEPALIVE_SECONDS', path: ['keepaliveSeconds'], type: 'integer' },
  { name: 'AGENTINFRA_MESH_MAX_ACLS_PER_PAIR', path: ['maxAclsPerPair'], type: 'integer' },
];
