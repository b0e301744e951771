import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { type AnyModule, defineModule } from './module.js';
import { buildOpenApiDocument, operationIdOf } from './openapi.js';
import { routesFor } from './route.js';

type Tree = { label: string; children: Tree[] };
const tree: z.ZodType<Tree> = z.lazy(() => z.object({ label: z.string(), children: z.array(tree) }));

const route = routesFor<undefined>();
const toyModule = defineModule({
  name: 'agent-toy',
  description: 'Toys.',
  ports: [],
  migrations: {},
  permissions: ['toy.write'],
  service: () => undefined,
  routes: [
    route({
      path: '/tree/put',
      summary: 'Store a tree.',
      description: 'Stores a recursive tree.',
      request: z.strictObject({ agent_id: z.string().regex(/^[a-z]+$/), tree }),
      response: z.object({ stored: z.boolean() }),
      auth: { kind: 'agent', permission: 'toy.write', agents: (body) => [body.agent_id] },
      handler: async () => ({ stored: true }),
    }),
    route({
      path: '/status',
      summary: 'Status.',
      example: { verbose: true },
      effects: { readOnly: true },
      request: z.strictObject({ verbose: z.boolean().optional() }),
      response: z.object({ ok: z.boolean() }),
      auth: { kind: 'none' },
      handler: async () => ({ ok: true }),
    }),
  ],
});

type Operation = {
  operationId: string;
  description: string;
  tags: string[];
  security: unknown[];
  requestBody: { required: boolean; content: { 'application/json': { schema: { $ref: string }; example?: unknown } } };
  responses: Record<string, { $ref?: string; description?: string; content?: Record<string, unknown> }>;
};
type Doc = {
  tags: Array<{ name: string; description: string }>;
  paths: Record<string, { post: Operation }>;
  components: { schemas: Record<string, unknown>; responses: Record<string, unknown> };
};

function build(modules: readonly AnyModule[] = [toyModule]): Doc {
  return buildOpenApiDocument({ modules, version: '1.2.3', now: Date.parse('2026-05-04T09:30:00.000Z') }) as unknown as Doc;
}

describe('buildOpenApiDocument', () => {
  it('moves the $defs of recursive schemas into components so every $ref resolves in the document', () => {
    const doc = build();
    const text = JSON.stringify(doc);
    expect(text).not.toContain('#/$defs/');
    const refs = [...text.matchAll(/"\$ref":"([^"]*)"/g)].map(([, ref]) => ref!);
    expect(refs).toContain('#/components/schemas/AgentToyTreePutRequestPart1');
    for (const ref of refs) {
      const [, kind, name] = /^#\/components\/(schemas|responses)\/(.+)$/.exec(ref) ?? [];
      expect(doc.components[kind as 'schemas' | 'responses'], ref).toHaveProperty(name!);
    }
    const put = doc.paths['/functions/v1/agent-toy/tree/put']!.post;
    expect(put.requestBody.content['application/json'].schema).toEqual({ $ref: '#/components/schemas/AgentToyTreePutRequest' });
  });

  it('gives each operation a stable id, its module tag, credentials, error responses and an example the schema accepts', () => {
    const doc = build();
    const put = doc.paths['/functions/v1/agent-toy/tree/put']!.post;
    expect(put.operationId).toBe('agentToyTreePut');
    expect(put.tags).toEqual(['agent-toy']);
    expect(put.description).toBe(
      'Stores a recursive tree.\n\nCredential: a device key of the agent the body names, a delegation from that agent with `toy.write` or the bridge key (404 when an agent the body names does not exist).',
    );
    expect(put.security).toEqual([{ deviceKey: [] }, { delegationToken: ['toy.write'] }, { bridgeKey: [] }]);
    expect(put.responses['401']).toEqual({ $ref: '#/components/responses/Unauthenticated' });
    expect(put.responses['422']).toEqual({ $ref: '#/components/responses/VerificationFailed' });
    expect(put.responses['507']).toEqual({ $ref: '#/components/responses/InsufficientStorage' });
    expect(put.responses['503']).toEqual({ $ref: '#/components/responses/Unavailable' });
    expect(put.requestBody.content['application/json'].example).toEqual({
      agent_id: 'alice',
      tree: { label: 'example', children: [{ label: 'example', children: [] }] },
    });
    expect(doc.tags).toEqual([{ name: 'agent-toy', description: 'Toys.' }]);
  });

  it('keeps a declared example, and documents no credential errors where no credential is checked', () => {
    const status = build().paths['/functions/v1/agent-toy/status']!.post;
    expect(status.requestBody.content['application/json'].example).toEqual({ verbose: true });
    expect(status.security).toEqual([]);
    expect(Object.keys(status.responses).sort()).toEqual(['200', '400', '404', '405', '408', '409', '413', '415', '429', '500', '503']);
  });

  // Docs walkthrough: /openapi.json disagreed with the server on these four points.
  it('documents 401 where the body carries the proof, alternate media, 405 and 408, and an optional body', () => {
    const proof = defineModule({
      ...toyModule,
      routes: [
        { ...toyModule.routes[1]!, auth: { kind: 'none', credentialField: 'grant_token' } },
        { ...toyModule.routes[0]!, alternateMedia: { 'text/plain': 'the tree as text.' } },
      ],
    });
    const doc = build([proof]);
    const status = doc.paths['/functions/v1/agent-toy/status']!.post;
    expect(status.responses['401']).toEqual({ $ref: '#/components/responses/Unauthenticated' });
    expect(status.responses['403']).toBeUndefined();
    expect(status.description).toContain('`grant_token` is the proof');
    expect(status.requestBody.required).toBe(false);
    const put = doc.paths['/functions/v1/agent-toy/tree/put']!.post;
    expect(put.requestBody.required).toBe(true);
    expect(Object.keys(put.responses['200']?.content ?? {})).toEqual(['application/json', 'text/plain']);
    expect(put.responses['200']?.description).toBe('Success. With `Accept: text/plain`: the tree as text.');
    expect(put.responses['405']).toEqual({ $ref: '#/components/responses/MethodNotAllowed' });
    expect(doc.components.responses).toHaveProperty('RequestTimeout');
  });

  it('refuses two routes with the same operationId', () => {
    const clash = defineModule({ ...toyModule, name: 'agent-toy-tree', routes: [toyModule.routes[1]!] });
    const other = defineModule({ ...toyModule, name: 'agent-toy', routes: [{ ...toyModule.routes[1]!, path: '/tree-status' }] });
    expect(operationIdOf('agent-toy-tree', '/status')).toBe(operationIdOf('agent-toy', '/tree-status'));
    expect(() => build([clash, other])).toThrow(/agentToyTreeStatus is used twice/);
  });
});
