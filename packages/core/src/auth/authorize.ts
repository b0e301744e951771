import { NotAllowedError, NotFoundError } from '../errors.js';
import type { RouteAuth } from '../kernel/route.js';
import type { Principal } from './principal.js';

/**
 * Checks that `principal` may call a route declared with `auth` on this
 * body, and returns the agent the call acts for (CONTRACT.md "Credentials").
 * @throws NotAllowedError (403) when the credential is valid but not for the
 *   named agent or lacks the permission.
 */
export function authorize<Req>(auth: RouteAuth<Req>, principal: Principal | null, body: Req): string {
  if (auth.kind === 'any' && auth.delegation === false && principal?.kind === 'delegation') {
    throw new NotAllowedError('This operation takes a device key or the bridge key; delegation tokens cannot perform it.');
  }
  if (auth.kind === 'any' && auth.permission !== undefined && principal?.kind === 'delegation') {
    if (!principal.permissions.includes(auth.permission)) {
      throw new NotAllowedError(`The delegation does not grant the permission "${auth.permission}".`);
    }
  }
  if (auth.kind === 'none' || auth.kind === 'any') return principal && principal.kind !== 'bridge' ? principal.agentId : '';
  if (auth.kind === 'bridge') {
    if (principal?.kind !== 'bridge') throw new NotAllowedError('This operation takes the bridge key.');
    return '';
  }
  if (!principal) throw new NotAllowedError('A credential is required.');
  const agents = auth.agents(body, principal).filter((agent): agent is string => typeof agent === 'string');
  if (principal.kind === 'bridge') {
    if (auth.bridge === false) throw new NotAllowedError('This operation takes a device key of the agent, not the bridge key.');
    return agents[0] ?? '';
  }
  if (!agents.includes(principal.agentId)) {
    throw new NotAllowedError(
      `This credential acts for agent "${principal.agentId}", not for ${agents.map((a) => `"${a}"`).join(' or ')}.`,
    );
  }
  if (principal.kind === 'delegation') {
    if (auth.delegation === false) throw new NotAllowedError('This operation takes a device key; delegation tokens cannot perform it.');
    if (!principal.permissions.includes(auth.permission)) {
      throw new NotAllowedError(`The delegation does not grant the permission "${auth.permission}".`);
    }
  }
  return principal.agentId;
}

/**
 * The agents a call must find registered before its handler runs: the ones a
 * bridge-key call on an `agent` route names (`agent_id`, `to_agent`, `a` and
 * `b` …), deduplicated, in the order the route lists them. Empty for every
 * other call: a device key or delegation token is bound to the agent it was
 * issued for, and `bridge`, `any` and `none` routes name no agent to act for.
 */
export function agentsToVerify<Req>(auth: RouteAuth<Req>, principal: Principal | null, body: Req): string[] {
  if (auth.kind !== 'agent' || principal?.kind !== 'bridge') return [];
  return [...new Set(auth.agents(body, principal).filter((agent): agent is string => typeof agent === 'string'))];
}

/**
 * Refuses a call that names agents which are not registered, before anything
 * is written (CONTRACT.md 404 `not_found`: the named record does not exist).
 * No operation deletes an agent, so one found here still exists when the
 * handler writes; one created meanwhile is simply refused this once.
 * @param agentIds from {@link agentsToVerify}; nothing is looked up when empty.
 * @param missingAgents the agent registry's answer for `agentIds` (one indexed lookup).
 * @throws NotFoundError (404) naming every missing agent.
 */
export async function requireRegisteredAgents(
  agentIds: readonly string[],
  missingAgents: (agentIds: readonly string[]) => Promise<string[]>,
): Promise<void> {
  if (agentIds.length === 0) return;
  const missing = await missingAgents(agentIds);
  if (missing.length === 0) return;
  const names = missing.map((agent) => `"${agent}"`).join(' and ');
  throw new NotFoundError(missing.length === 1 ? `Agent ${names} does not exist.` : `Agents ${names} do not exist.`);
}
