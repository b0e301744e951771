import type { AnyRoute } from '@agentinfra/core';

/** What an MCP tool name may hold (MCP 2025-11-25 "Tool names": 1–128 of `A-Z a-z 0-9 _ - .`); ours are snake_case. */
const TOOL_NAME = /^[a-z][a-z0-9_]{0,127}$/;

/**
 * The MCP tool name of a route: its `tool` field, or `<module>_<path>` with
 * the `agent-` prefix dropped and every run of other characters turned into
 * `_` (`agent-scheduler` + `/job/put` → `scheduler_job_put`).
 * @returns the name, or `null` when the route declares `tool: false`.
 * @throws Error when the name is not stable snake_case (a declaration bug).
 */
export function toolNameOf(moduleName: string, route: AnyRoute<unknown>): string | null {
  if (route.tool === false) return null;
  const derived = `${moduleName.replace(/^agent-/, '')}${route.path}`
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_|_$/g, '');
  const name = route.tool ?? derived;
  if (!TOOL_NAME.test(name)) throw new Error(`Tool name "${name}" of ${moduleName}${route.path} is not snake_case.`);
  return name;
}
