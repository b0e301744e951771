import { createPortRef } from '../kernel/port-ref.js';

/**
 * Who is calling, as established from the request's credential.
 * - `bridge`: the service-level bridge key (acts for any agent).
 * - `device`: a device key; acts as its agent with every permission.
 * - `delegation`: a delegation token; acts as `agentId` (the delegating
 *   `from_agent`) only for `permissions`, until it expires or is revoked.
 *   `toAgent` is the agent its chain was given to: its own `to_agent`, or
 *   for a token made with another token, that of the chain's first
 *   delegation (the rate limit counts per `agentId` and `toAgent`).
 */
export type Principal =
  | { kind: 'bridge' }
  | { kind: 'device'; agentId: string; deviceId: string }
  | { kind: 'delegation'; agentId: string; delegationId: string; toAgent: string; permissions: readonly string[] };

/**
 * Resolves device keys and delegation tokens to principals, and tells which
 * agents exist. Provided by the identity module; the kernel checks the
 * bridge key itself.
 */
export interface CredentialVerifier {
  /**
   * @param options.credential the raw bearer value (`dk_…`, `dt_…`).
   * @returns the principal, or `null` when unknown, expired or revoked.
   */
  verify(options: { credential: string }): Promise<Principal | null>;
  /**
   * Which of `agentIds` are not registered agents. The kernel asks before a
   * bridge-key call acts for the agents it names, and refuses the call (404)
   * when any is missing; device keys and delegations need no such check.
   * @param options.agentIds distinct agent ids (the few one request names).
   * @returns the unregistered ones, in the order given; empty when all exist.
   */
  missingAgents(options: { agentIds: readonly string[] }): Promise<string[]>;
}

/** The port through which a module (identity) gives the kernel its credential verifier. */
export const credentialsPort = createPortRef<CredentialVerifier>({
  id: 'credentials',
  description: 'resolves device keys and delegation tokens to principals and tells which agents exist',
});

/** Team membership, provided by the identity module to the others. */
export interface TeamDirectory {
  /** Whether `agentId` is a member of `team` (the name without the `team:` prefix). */
  isMember(options: { agentId: string; team: string }): Promise<boolean>;
  /** Names of the teams `agentId` belongs to, sorted. */
  teamsOf(options: { agentId: string }): Promise<string[]>;
}

/**
 * Which agent ids are registered, for modules that record another agent as
 * a recipient (an artifact grant's `to_agent`). The kernel provides it from
 * the credential verifier; without the identity module there is no agent
 * registry and every id is accepted.
 */
export interface AgentDirectory {
  /**
   * @param options.agentIds distinct agent ids (the few one request names).
   * @returns the unregistered ones, in the order given; empty when all exist.
   */
  missing(options: { agentIds: readonly string[] }): Promise<string[]>;
}

/** The port through which a module (identity) gives the others team membership. */
export const teamsPort = createPortRef<TeamDirectory>({ id: 'teams', description: 'team membership for team:<name> scopes' });

/** A short, non-secret description of a principal for logs. */
export function describePrincipal(principal: Principal | null): string {
  if (!principal) return 'anonymous';
  if (principal.kind === 'bridge') return 'bridge';
  if (principal.kind === 'device') return `device:${principal.deviceId}`;
  return `delegation:${principal.delegationId}`;
}
