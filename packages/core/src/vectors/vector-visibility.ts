/**
 * Visibility keys of the VectorIndex filter. An item is findable under
 * `self:<agentId>` when it carries scope `self`, and under each `team:<name>`
 * scope it carries; a query admits `self:<ownerAgentId>` (with `includeSelf`)
 * and its `team:` scopes. An item matches a query when the two key sets meet,
 * which is exactly the port's rule. Other scope strings are never keys, so
 * `self` passed among the team scopes cannot reveal other agents' rows.
 */

/** Keys an item is findable under, sorted and without repeats. */
export function itemVisibilityKeys(item: { agentId: string; scopes: readonly string[] }): string[] {
  const keys = new Set<string>();
  for (const scope of item.scopes) {
    if (scope === 'self') keys.add(`self:${item.agentId}`);
    else if (scope.startsWith('team:')) keys.add(scope);
  }
  return [...keys].sort();
}

/** Keys a query filter admits, sorted and without repeats; empty when nothing can match. */
export function filterVisibilityKeys(filter: { ownerAgentId: string; includeSelf: boolean; teamScopes: readonly string[] }): string[] {
  const keys = new Set(filter.teamScopes.filter((scope) => scope.startsWith('team:')));
  if (filter.includeSelf) keys.add(`self:${filter.ownerAgentId}`);
  return [...keys].sort();
}
