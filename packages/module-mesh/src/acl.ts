import { agentIdSchema } from '@agentinfra/core';
import { z } from 'zod';

/** Transport protocols an ACL can open. */
export const aclProtocols = ['tcp', 'udp', 'icmp'] as const;
/** `tcp`, `udp` or `icmp`. */
export type AclProtocol = (typeof aclProtocols)[number];

/**
 * An ACL: `from_agent` may reach `to_agent` on `port`/`proto`. Ports are
 * 1–65535 for `tcp` and `udp`; `icmp` has no ports and takes `port: 0`.
 * An agent cannot be given an ACL to itself.
 */
export const aclSchema = z
  .strictObject({
    from_agent: agentIdSchema,
    to_agent: agentIdSchema,
    port: z.number().int().min(0).max(65_535),
    proto: z.enum(aclProtocols),
  })
  .superRefine((acl, ctx) => {
    if (acl.proto === 'icmp' && acl.port !== 0) ctx.addIssue({ code: 'custom', path: ['port'], message: 'must be 0 with proto icmp' });
    if (acl.proto !== 'icmp' && acl.port === 0)
      ctx.addIssue({ code: 'custom', path: ['port'], message: `must be 1–65535 with proto ${acl.proto}` });
    if (acl.from_agent === acl.to_agent) ctx.addIssue({ code: 'custom', path: ['to_agent'], message: 'must differ from from_agent' });
  });
/** A validated ACL as the API spells it. */
export type Acl = z.output<typeof aclSchema>;
