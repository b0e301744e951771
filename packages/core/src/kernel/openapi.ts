import { FUNCTIONS_BASE } from './http.js';
import type { AnyModule, AnyRoute } from './module.js';
import { errorResponseComponents, errorResponsesOf, errorSchema } from './openapi-errors.js';
import { type SampleContext, sampleOf } from './openapi-example.js';
import { SchemaComponents } from './openapi-schemas.js';

const securitySchemes = {
  bridgeKey: {
    type: 'http',
    scheme: 'bearer',
    description:
      "The service-level bridge key (`bk_…`): the only credential for service-wide operations, and taken by most agent operations; each operation's security lists what it takes (a few, such as storing secrets or sending mail, take only the agent's own device key).",
  },
  deviceKey: { type: 'http', scheme: 'bearer', description: 'A device key (`dk_…`): acts as its agent with every permission.' },
  delegationToken: {
    type: 'http',
    scheme: 'bearer',
    description: 'A delegation token (`dt_…`): acts as the delegating agent, only for the permissions in its scope.',
  },
};

function securityOf(route: AnyRoute<unknown>): Array<Record<string, string[]>> {
  switch (route.auth.kind) {
    case 'none':
      return [];
    case 'bridge':
      return [{ bridgeKey: [] }];
    case 'any':
      return route.auth.delegation === false
        ? [{ deviceKey: [] }, { bridgeKey: [] }]
        : [{ deviceKey: [] }, { delegationToken: route.auth.permission ? [route.auth.permission] : [] }, { bridgeKey: [] }];
    case 'agent': {
      const options: Array<Record<string, string[]>> = [{ deviceKey: [] }];
      if (route.auth.delegation !== false) options.push({ delegationToken: [route.auth.permission] });
      if (route.auth.bridge !== false) options.push({ bridgeKey: [] });
      return options;
    }
  }
}

/** One sentence naming the credentials an operation takes, appended to its description. */
function credentialSentence(route: AnyRoute<unknown>): string {
  const { auth } = route;
  switch (auth.kind) {
    case 'none':
      return auth.credentialField
        ? `Credential: none; the body's \`${auth.credentialField}\` is the proof (unknown, expired or revoked: 401).`
        : 'Credential: none; the body carries its own proof.';
    case 'bridge':
      return 'Credential: the bridge key.';
    case 'any':
      if (auth.delegation === false) return 'Credential: a device key or the bridge key (not a delegation token).';
      return `Credential: any valid credential${auth.permission ? ` (a delegation needs \`${auth.permission}\`)` : ''}.`;
    case 'agent': {
      const options = ['a device key of the agent the body names'];
      if (auth.delegation !== false) options.push(`a delegation from that agent with \`${auth.permission}\``);
      if (auth.bridge !== false) options.push('the bridge key (404 when an agent the body names does not exist)');
      const last = options.pop();
      return `Credential: ${options.length > 0 ? `${options.join(', ')} or ${last}` : last}.`;
    }
  }
}

/** `agent-memory` + `/kv/put` → `agentMemoryKvPut`: unique per route and stable while the path is. */
export function operationIdOf(moduleName: string, path: string): string {
  return `${moduleName}${path}`.replace(/[^A-Za-z0-9]+(.)/g, (_, next: string) => next.toUpperCase());
}

/**
 * The OpenAPI 3.1 document of every mounted route, generated from the same
 * zod schemas and auth declarations the kernel enforces: request and
 * response bodies as named `components.schemas`, CONTRACT.md errors as
 * `components.responses`, one tag per module, a request example per
 * operation (the route's own, else one derived from its schema and checked
 * against it; its instants are relative to `now`, default the current time).
 * @throws Error when two routes map to the same operationId.
 */
export function buildOpenApiDocument(options: { modules: readonly AnyModule[]; version: string; now?: number }): Record<string, unknown> {
  const now = options.now ?? Date.now();
  const components = new SchemaComponents();
  components.put('Error', errorSchema);
  const paths: Record<string, unknown> = {};
  const operationIds = new Set<string>();
  for (const module of options.modules) {
    for (const route of module.routes as readonly AnyRoute<unknown>[]) {
      const operationId = operationIdOf(module.name, route.path);
      if (operationIds.has(operationId)) throw new Error(`OpenAPI: operationId ${operationId} is used twice.`);
      operationIds.add(operationId);
      const name = operationId[0]!.toUpperCase() + operationId.slice(1);
      const requestRef = components.add(`${name}Request`, route.request, 'input');
      const responseRef = components.add(`${name}Response`, route.response, 'output');
      const example =
        route.example ?? derivedExample(route, { module: module.name, now }, components.schemas[`${name}Request`]!, components.schemas);
      paths[`${FUNCTIONS_BASE}/${module.name}${route.path}`] = {
        post: {
          operationId,
          summary: route.summary,
          description: `${route.description ?? route.summary}\n\n${credentialSentence(route)}`,
          tags: [module.name],
          security: securityOf(route),
          ...(route.auth.kind === 'agent' ? { 'x-permission': route.auth.permission } : {}),
          requestBody: {
            // An empty body counts as {}: a route whose fields are all optional needs none.
            required: !route.request.safeParse({}).success,
            content: { 'application/json': { schema: requestRef, ...(example === undefined ? {} : { example }) } },
          },
          responses: {
            [String(route.status ?? 200)]: successResponse(route, responseRef),
            ...errorResponsesOf(route),
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
      license: { name: 'MIT', identifier: 'MIT' },
      description: [
        'Infrastructure for software agents: identity, memory, artifacts, mesh, gateway, postbox and scheduler.',
        `Every operation is \`POST ${FUNCTIONS_BASE}/<module>/<path>\` with a JSON body and \`Authorization: Bearer <credential>\`.`,
        'Unknown body fields are rejected. Errors are `{ "error": { "code", "message", "details"? } }`; every response carries `x-request-id`.',
      ].join('\n\n'),
    },
    servers: [{ url: '/', description: 'The server that served this document.' }],
    tags: options.modules.map((module) => ({
      name: module.name,
      description: module.description ?? `The ${module.name} module's operations, under ${FUNCTIONS_BASE}/${module.name}.`,
    })),
    paths,
    components: { schemas: components.schemas, responses: errorResponseComponents(), securitySchemes },
  };
}

/** The success response: the JSON body, and the route's {@link AnyRoute.alternateMedia} as text bodies chosen by `Accept`. */
function successResponse(route: AnyRoute<unknown>, responseRef: unknown): Record<string, unknown> {
  const alternates = Object.entries(route.alternateMedia ?? {});
  const described = alternates.map(([type, holds]) => `With \`Accept: ${type}\`: ${holds}`);
  return {
    description: ['Success.', ...described].join(' '),
    content: {
      'application/json': { schema: responseRef },
      ...Object.fromEntries(alternates.map(([type]) => [type, { schema: { type: 'string' } }])),
    },
  };
}

/** An example derived from the request's JSON Schema, kept only if the route's zod schema accepts it. */
function derivedExample(
  route: AnyRoute<unknown>,
  context: SampleContext,
  schema: Record<string, unknown>,
  all: Record<string, Record<string, unknown>>,
): unknown {
  const sample = sampleOf(schema, all, context);
  return sample !== undefined && route.request.safeParse(sample).success ? sample : undefined;
}
