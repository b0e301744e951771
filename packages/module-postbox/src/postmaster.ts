/** The local part RFC 5321 §4.5.1 reserves: every mail domain's server MUST accept mail for it. */
const POSTMASTER = 'postmaster';

/**
 * Where mail for `postmaster` goes (config `postbox.postmasterAgent`): RFC
 * 5321 §4.5.1 requires a server to accept `RCPT TO:<postmaster@domain>` for
 * the domains it serves and `RCPT TO:<Postmaster>` without a domain. The
 * reserved local part is no agent's to allocate, so the operator names the
 * agent that reads it. An agent that holds the address anyway (an operator
 * who took `postmaster` off `reservedLocalParts` and allocated it) keeps it.
 */
export interface PostmasterRoute {
  /** `address` (bare, lower-case) as stored: `postmaster` without a domain is `postmaster@<mailDomain>`; any other unchanged. */
  canonical(address: string): string;
  /** The configured agent when `address` (bare, lower-case, {@link canonical}) is the postmaster's, else `undefined`. */
  agentFor(address: string): string | undefined;
}

/**
 * @param options.mailDomain the served domain (lower-case).
 * @param options.agentId the agent receiving postmaster mail; without one, `postmaster` is an address like any other nobody holds (550).
 *   Whether that agent exists is for the callers to check at each delivery (see `delivered` in `service.ts`).
 */
export function createPostmasterRoute(options: { mailDomain: string; agentId: string | undefined }): PostmasterRoute {
  const address = `${POSTMASTER}@${options.mailDomain}`;
  return {
    canonical: (value) => (value === POSTMASTER ? address : value),
    agentFor: (value) => (value === address ? options.agentId : undefined),
  };
}
