import { NotAllowedError } from '../errors.js';
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
