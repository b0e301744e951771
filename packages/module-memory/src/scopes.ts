import { NotAllowedError, type TeamDirectory } from '@agentinfra/core';

/** A vector-index filter built from a caller's requested scopes. */
export interface ScopeFilter {
  /** The caller's own `self` rows are wanted. */
  includeSelf: boolean;
  /** Requested `team:<name>` entries. */
  teamScopes: string[];
}

/** Scope entries without duplicates, sorted (so `self` comes before every `team:…`). */
export function normalizeScopes(scopes: readonly string[]): string[] {
  return [...new Set(scopes)].sort();
}

/** Splits normalized scope entries into the `self` flag and the team entries. */
export function scopeFilterOf(scopes: readonly string[]): ScopeFilter {
  return { includeSelf: scopes.includes('self'), teamScopes: scopes.filter((scope) => scope.startsWith('team:')) };
}

/**
 * Checks that `agentId` belongs to every team named by a `team:<name>` entry
 * of `scopes` (one directory lookup).
 * @throws NotAllowedError (403 `forbidden`) naming the first team the agent is not a member of.
 */
export async function assertTeamScopes(teams: TeamDirectory, agentId: string, scopes: readonly string[]): Promise<void> {
  const wanted = scopes.filter((scope) => scope.startsWith('team:')).map((scope) => scope.slice('team:'.length));
  if (wanted.length === 0) return;
  const memberOf = new Set(await teams.teamsOf({ agentId }));
  const missing = wanted.find((team) => !memberOf.has(team));
  if (missing !== undefined) throw new NotAllowedError(`Agent "${agentId}" is not a member of team "${missing}".`);
}

/**
 * Whether a stored row is visible under a caller's scope filter: the
 * caller's own row scoped `self`, or a row carrying a requested team scope.
 */
export function isVisible(row: { agentId: string; scopes: readonly string[] }, callerId: string, filter: ScopeFilter): boolean {
  if (filter.includeSelf && row.agentId === callerId && row.scopes.includes('self')) return true;
  return row.scopes.some((scope) => filter.teamScopes.includes(scope));
}
