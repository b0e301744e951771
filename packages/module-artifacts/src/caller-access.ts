import { NotAllowedError, NotFoundError, type Principal } from '@agentinfra/core';

/**
 * Checks that `principal` may act on an artifact owned by `owner` with
 * `permission` (CONTRACT.md "Credentials"): the bridge key, the owner's device
 * key, or a delegation from the owner carrying the permission.
 * @throws NotFoundError (404) when the credential acts for another agent, so
 *   other agents' artifact ids are not revealed; NotAllowedError (403) when a
 *   delegation from the owner lacks the permission.
 */
export function assertActsFor(principal: Principal, owner: string, permission: string, artifactId: string): void {
  if (principal.kind === 'bridge') return;
  if (principal.agentId !== owner) throw new NotFoundError(`Artifact "${artifactId}" does not exist.`);
  if (principal.kind === 'delegation' && !principal.permissions.includes(permission)) {
    throw new NotAllowedError(`The delegation does not grant the permission "${permission}".`);
  }
}
