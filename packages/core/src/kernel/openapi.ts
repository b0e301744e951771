import { z } from 'zod';
import { FUNCTIONS_BASE } from './http.js';
import type { AnyModule, AnyRoute } from './module.js';

const errorSchema = {
  type: 'object',
  required: ['error'],
  properties: {
    error: {
      type: 'object',
      required: ['code', 'message'],
      properties: { code: { type: 'string' }, message: { type: 'string' }, details: {} },
    },
  },
};

function jsonSchema(schema: z.ZodType, io: 'input' | 'output'): Record<string, unknown> {
  const { $schema: _ignored, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as Record<string, unknown>;
  return rest;
}

function securityOf(route: AnyRoute<unknown>): Array<Record<string, string[]>> {
  switch (route.auth.kind) {
    case 'none':
      return [];
    case 'bridge':
      return [{ bridgeKey: [] }];
    case 'any':
      return [{ bridgeKey: [] }, { deviceKey: [] }, { delegationToken: [] }];
    case 'agent': {
      const options: Array<Record<string, string[]>> = [{ deviceKey: [] }];
      if (route.auth.delegation !== false) options.push({ delegationToken: [route.auth.permission] });
      if (route.auth.bridge !== false) options.push({ bridgeKey: [] });
      return options;
    }
  }
}

/**
 * The OpenAPI 3.1 document of every mounted route, generated from the same
 * zod schemas and auth declarations the kernel enforces.
 */
export function buildOpenApiDocument(options: { modules: readonly AnyModule[]; version: string }): Record<string, unknown> {
  const paths: Record<string, unknown> = {};
  for (const module of options.modules) {
    for (const route of module.routes as readonly AnyRoute<unknown>[]) {
      const errors = Object.fromEntries(
        ['400', '401', '403', '404', '409', '413', '422', '429'].map((status) => [
          status,
          { description: 'Error', content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } },
        ]),
      );
      paths[`${FUNCTIONS_BASE}/${module.name}${route.path}`] = {
        post: {
          operationId: `${module.name}${route.path}`.replace(/[^A-Za-z0-9]+(.)/g, (_, next: string) => next.toUpperCase()),
          summary: route.summary,
          tags: [module.name],
          security: securityOf(route),
          ...(route.auth.kind === 'agent' ? { 'x-permission': route.auth.permission } : {}),
          requestBody: { required: true, content: { 'application/json': { schema: jsonSchema(route.request, 'input') } } },
          responses: {
            [String(route.status ?? 200)]: {
              description: 'Success',
              content: { 'application/json': { schema: jsonSchema(route.response, 'output') } },
            },
            ...errors,
          },
        },
      };
    }
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'agentinfra',
      version: options.version,
      description:
        'Infrastructure for software agents. Every endpoint is POST with a JSON body; errors are { error: { code, message, details? } }.',
    },
    servers: [{ url: '/' }],
    paths,
    components: {
      schemas: { Error: errorSchema },
      securitySchemes: {
        bridgeKey: { type: 'http', scheme: 'bearer', description: 'The service-level bridge key (bk_…).' },
        deviceKey: { type: 'http', scheme: 'bearer', description: 'A device key (dk_…) acting as its agent.' },
        delegationToken: { type: 'http', scheme: 'bearer', description: 'A delegation token (dt_…) acting as from_agent for its scope.' },
      },
    },
  };
}
