import type { AnyModule, AnyRoute, Principal, RouteEffects } from '@agentinfra/core';
import type { ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import { type ObjectJsonSchema, objectJsonSchema, toolInputSchema } from './json-schemas.js';
import { toolNameOf } from './tool-names.js';
import { UPLOAD_TOOL_NAME, uploadToolDefinition } from './upload-tool.js';

/** What an MCP tool is, as `tools/list` shows it. */
export interface ToolView {
  name: string;
  description: string;
  inputSchema: ObjectJsonSchema;
  outputSchema: ObjectJsonSchema;
  annotations: ToolAnnotations;
}

/** A tool that calls one route of a module through the HTTP pipeline. */
export interface RouteTool extends ToolView {
  kind: 'route';
  /** Module name, e.g. `agent-memory`. */
  module: string;
  route: AnyRoute<unknown>;
  /** Whether the input has an `agent_id` that defaults to the credential's agent. */
  actingAgent: boolean;
  /** The permission a delegation needs to see and call the tool; `null` when only device keys may. */
  delegationPermission: string | null;
}

/** A tool of the MCP surface itself (no route behind it), e.g. `artifacts_upload`. */
export interface SurfaceTool extends ToolView {
  kind: 'surface';
  delegationPermission: string | null;
}

/** One entry of the catalog. */
export type ToolDefinition = RouteTool | SurfaceTool;

/** MCP annotations from a route's declared effects (omitted flags are false). */
export function annotationsOf(effects: RouteEffects | undefined): ToolAnnotations {
  return {
    readOnlyHint: effects?.readOnly ?? false,
    destructiveHint: effects?.destructive ?? false,
    idempotentHint: effects?.idempotent ?? false,
    openWorldHint: effects?.openWorld ?? false,
  };
}

/**
 * Which delegations may call a route (CONTRACT.md "Credentials"): an `agent`
 * route's permission unless it refuses delegations; an `any` route's declared
 * permission; `none` routes and `any` routes without one are for device keys only.
 */
function delegationPermissionOf(route: AnyRoute<unknown>): string | null {
  if (route.auth.kind === 'agent') return route.auth.delegation === false ? null : route.auth.permission;
  if (route.auth.kind === 'any') return route.auth.permission ?? null;
  return null;
}

/**
 * Every MCP tool the loaded modules give, in module and route order: one per
 * route a device key or delegation may call (bridge-only routes and routes
 * declaring `tool: false` are left out), plus `artifacts_upload` after
 * `artifacts_register` when agent-artifacts is loaded.
 * @throws Error when two routes get the same tool name or a schema is not an object.
 */
export function buildToolCatalog(modules: readonly AnyModule[]): ToolDefinition[] {
  const tools: ToolDefinition[] = [];
  const names = new Set<string>();
  const add = (tool: ToolDefinition) => {
    if (names.has(tool.name)) throw new Error(`Two tools are named "${tool.name}".`);
    names.add(tool.name);
    tools.push(tool);
  };
  for (const module of modules) {
    for (const route of module.routes as readonly AnyRoute<unknown>[]) {
      if (route.auth.kind === 'bridge') continue;
      const name = toolNameOf(module.name, route);
      if (name === null) continue;
      const input = toolInputSchema(route.request);
      add({
        kind: 'route',
        name,
        description: route.description ?? route.summary,
        inputSchema: input.schema,
        outputSchema: objectJsonSchema(route.response, 'output'),
        annotations: annotationsOf(route.effects),
        module: module.name,
        route,
        actingAgent: input.actingAgent,
        delegationPermission: delegationPermissionOf(route),
      });
      if (module.name === 'agent-artifacts' && route.path === '/register' && !names.has(UPLOAD_TOOL_NAME)) add(uploadToolDefinition());
    }
  }
  return tools;
}

/** Whether `principal` (a device key or delegation) may see and call `tool`. */
export function mayUse(tool: ToolDefinition, principal: Principal): boolean {
  if (principal.kind === 'device') return true;
  if (principal.kind === 'delegation')
    return tool.delegationPermission !== null && principal.permissions.includes(tool.delegationPermission);
  return false;
}

/** The `tools/list` entry of a tool. */
export function toolView(tool: ToolDefinition): ToolView {
  return {
    name: tool.name,
    description: tool.description,
    inputSchema: tool.inputSchema,
    outputSchema: tool.outputSchema,
    annotations: tool.annotations,
  };
}
