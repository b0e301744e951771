import type { EnvBinding } from '@agentinfra/core';
import { z } from 'zod';
import { addressPoolProblem } from './address-pool.js';

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
];
