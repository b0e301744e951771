import { readFileSync } from 'node:fs';
import { defaultModules } from '@agentinfra/modules';
import { describe, expect, it } from 'vitest';
import { formatRouteTable } from './format-table.js';
import { renderRouteTable } from './route-table.js';

describe('generated route table', () => {
  it('matches the route declarations (run `pnpm --filter @agentinfra/client gen-routes` after changing a route)', () => {
    const committed = readFileSync(new URL('../generated/routes.ts', import.meta.url), 'utf8');
    expect(committed).toBe(formatRouteTable(renderRouteTable(defaultModules)));
  });

  it('has a route for every declared route and a helper consistent with the MCP tool names', () => {
    const text = renderRouteTable(defaultModules);
    const count = defaultModules.reduce((sum, module) => sum + module.routes.length, 0);
    expect(text.match(/^ {2}"agent-[^"]+": \{$/gm)).toHaveLength(count);
    expect(text).toContain('["memory.write", "agent-memory/mem/write"]');
    expect(text).toContain('["identity.secrets.get", "agent-identity/secrets/get"]');
    expect(text).toContain('["artifacts.register", "agent-artifacts/register"]');
  });
});
