import type { AnyRoute, Principal } from '@agentinfra/core';
import { defaultModules } from '@agentinfra/modules';
import { describe, expect, it } from 'vitest';
import { buildToolCatalog, mayUse } from './tool-catalog.js';

const catalog = buildToolCatalog(defaultModules);
const routes = defaultModules.flatMap((module) =>
  (module.routes as readonly AnyRoute<unknown>[]).map((route) => ({ module: module.name, route })),
);

describe('tool catalog from the route declarations (#14)', () => {
  it('gives every route of the seven modules a model-facing description and declared effects', () => {
    const missing = routes.filter(({ route }) => !route.description || !route.effects).map(({ module, route }) => `${module}${route.path}`);
    expect(missing).toEqual([]);
  });

  it('makes one tool per route a device key or delegation may call, with stable snake_case names', () => {
    const agentRoutes = routes.filter(({ route }) => route.auth.kind !== 'bridge' && route.tool !== false);
    expect(catalog.filter((tool) => tool.kind === 'route')).toHaveLength(agentRoutes.length);
    for (const tool of catalog) expect(tool.name).toMatch(/^[a-z][a-z0-9_]*$/);
    expect(catalog.map((tool) => tool.name)).toEqual(
      expect.arrayContaining(['memory_write', 'memory_query', 'artifacts_register', 'postbox_list', 'scheduler_job_put']),
    );
    expect(new Set(catalog.map((tool) => tool.name)).size).toBe(catalog.length);
  });

  it('takes inputSchema and outputSchema from the zod schemas, with agent_id optional', () => {
    const write = catalog.find((tool) => tool.name === 'memory_write')!;
    expect(write.inputSchema).toMatchObject({ type: 'object', additionalProperties: false });
    expect(write.inputSchema.required).toEqual(['kind', 'text', 'provenance', 'scope']);
    expect(write.inputSchema.properties).toHaveProperty('agent_id');
    expect(write.outputSchema).toMatchObject({ type: 'object', required: ['id', 'created_at'] });
    for (const tool of catalog) expect(tool.inputSchema.required ?? []).not.toContain('agent_id');
  });

  it('lets a delegation use a tool only with the permission its route declares', () => {
    const delegation = (permissions: string[]): Principal => ({
      kind: 'delegation',
      agentId: 'a',
      delegationId: 'dlg_1',
      toAgent: 'b',
      permissions,
    });
    const device: Principal = { kind: 'device', agentId: 'a', deviceId: 'dev_1' };
    const names = (principal: Principal) => catalog.filter((tool) => mayUse(tool, principal)).map((tool) => tool.name);
    expect(names(device)).toHaveLength(catalog.length);
    expect(names(delegation(['memory.read']))).toEqual(['memory_query', 'memory_set_get', 'memory_kv_get']);
    // Device-key-only routes (delegation: false, or auth any/none without a permission) stay hidden from every delegation.
    const all = delegation(defaultModules.flatMap((module) => [...module.permissions]));
    expect(names(all)).not.toContain('identity_device_revoke');
    expect(names(all)).not.toContain('artifacts_fetch');
    expect(names(all)).toContain('artifacts_commit');
    expect(names({ kind: 'bridge' })).toEqual([]);
  });
});
