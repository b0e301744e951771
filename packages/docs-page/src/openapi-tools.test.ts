import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHttpDelivery, operationIdOf } from '@agentinfra/core';
import { seedAgentKeys } from '@agentinfra/core/testing';
import { defaultModules } from '@agentinfra/modules';
import SwaggerParser from '@apidevtools/swagger-parser';
import { createConfig, lintFromString } from '@redocly/openapi-core';
import openapiTS, { astToString } from 'openapi-typescript';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type OpenApiDocument, resolveSchema } from './openapi-document.js';
import { renderFields } from './render-schema.js';
import { type DocsTestServer, startDocsTestServer } from './test-support/docs-test-server.js';

/** Compiles `files` (name → source) with strict settings; returns the diagnostics as text. */
function compile(files: Record<string, string>): string[] {
  const dir = mkdtempSync(join(tmpdir(), 'agentinfra-openapi-types-'));
  for (const [name, source] of Object.entries(files)) writeFileSync(join(dir, name), source);
  const program = ts.createProgram(
    Object.keys(files).map((name) => join(dir, name)),
    {
      strict: true,
      noEmit: true,
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      types: [],
    },
  );
  return ts.getPreEmitDiagnostics(program).map((diagnostic) => ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'));
}

const USAGE = `import type { components, paths } from './api.js';
type KvPut = paths['/functions/v1/agent-memory/kv/put']['post'];
export const body: KvPut['requestBody']['content']['application/json'] = { agent_id: 'alice', key: 'k', value: { a: [1] }, scope: ['self'] };
// @ts-expect-error unknown fields are not part of the request type
export const extra: KvPut['requestBody']['content']['application/json'] = { agent_id: 'alice', key: 'k', value: 1, scope: ['self'], scopes: [] };
export const answer: KvPut['responses']['200']['content']['application/json'] = { key: 'k', updated_at: '2026-01-01T00:00:00.000Z' };
export const failure: KvPut['responses']['403']['content']['application/json'] = { error: { code: 'forbidden', message: 'no' } };
export const error: components['schemas']['Error'] = { error: { code: 'not_found', message: 'No such record.', details: { any: 1 } } };
`;

/**
 * Fields where an example may name the agent `alice`: the acting or target
 * agent, the agent search of /admin/agents/list and alice's mailbox name.
 */
const AGENT_NAMING_FIELDS = new Set(['agent_id', 'from_agent', 'to_agent', 'a', 'b', 'query', 'local_part']);
/** Id prefixes of CONTRACT.md "Ids" (`newId`), plus agent-postbox's webhooks. */
const ID_PREFIXES = ['mem_', 'dev_', 'dlg_', 'art_', 'grt_', 'msg_', 'job_', 'run_', 'hst_', 'whk_'];

/** Every string in `value` with the name of the field holding it (array items: the array's field). */
function stringFields(value: unknown, field = ''): Array<[string, string]> {
  if (typeof value === 'string') return [[field, value]];
  if (Array.isArray(value)) return value.flatMap((item) => stringFields(item, field));
  if (value === null || typeof value !== 'object') return [];
  return Object.entries(value).flatMap(([key, inner]) => stringFields(inner, key));
}

/** Public DNS for the example host names (example.com), which callback and webhook URLs must resolve to. */
const publicResolver = async () => [{ address: '93.184.215.14', family: 4 as const }];

describe('the served OpenAPI document, checked by the tools developers use (#13)', () => {
  let t: DocsTestServer;
  let text: string;
  let doc: OpenApiDocument & { tags: Array<{ name: string; description: string }> };

  beforeAll(async () => {
    t = await startDocsTestServer({ delivery: createHttpDelivery({ allowPrivate: false, resolver: publicResolver }) });
    const response = await fetch(`${t.server.url}/openapi.json`);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    text = await response.text();
    doc = JSON.parse(text);
  });

  afterAll(async () => {
    await t.stop();
  });

  it('is valid OpenAPI 3.1 for @apidevtools/swagger-parser, every $ref resolving', async () => {
    const validated = (await SwaggerParser.validate(JSON.parse(text))) as { openapi: string };
    expect(validated.openapi).toBe('3.1.0');
  });

  it("passes @redocly/openapi-core's recommended rules with no error and no warning", async () => {
    const config = await createConfig({ extends: ['recommended'] });
    const problems = await lintFromString({ source: text, absoluteRef: 'openapi.json', config });
    expect(
      problems.map((problem) => `${problem.severity} ${problem.ruleId}: ${problem.message} at ${problem.location[0]?.pointer}`),
    ).toEqual([]);
  });

  it('generates TypeScript types with openapi-typescript that compile and type request and response bodies', async () => {
    const types = astToString(await openapiTS(JSON.parse(text)));
    expect(types).toContain('"/functions/v1/agent-memory/mem/query"');
    expect(compile({ 'api.ts': types, 'usage.ts': USAGE })).toEqual([]);
  });

  it('documents every route of every module: stable operationId, module tag, description, credentials, errors and a valid example', () => {
    const ids = new Set<string>();
    const schemes = Object.keys(doc.components?.securitySchemes ?? {});
    expect(doc.tags.map((tag) => tag.name)).toEqual(defaultModules.map((module) => module.name));
    for (const tag of doc.tags) expect(tag.description.length).toBeGreaterThan(20);
    for (const module of defaultModules) {
      for (const route of module.routes) {
        const path = `/functions/v1/${module.name}${route.path}`;
        const operation = doc.paths[path]?.post;
        expect(operation, path).toBeDefined();
        expect(operation!.operationId).toBe(operationIdOf(module.name, route.path));
        ids.add(operation!.operationId);
        expect(operation!.tags).toEqual([module.name]);
        expect(operation!.summary).toBe(route.summary);
        expect(operation!.description).toMatch(/\n\nCredential: .+\.$/);
        for (const requirement of operation!.security ?? []) expect(schemes).toEqual(expect.arrayContaining(Object.keys(requirement)));
        expect(operation!.security!.length === 0).toBe(route.auth.kind === 'none');
        expect(operation!.responses['400']).toEqual({ $ref: '#/components/responses/InvalidRequest' });
        expect(operation!.responses['500']).toEqual({ $ref: '#/components/responses/Internal' });
        const example = operation!.requestBody?.content['application/json']?.example;
        expect(route.request.safeParse(example).success, `example of ${path}: ${JSON.stringify(example)}`).toBe(true);
      }
    }
    expect(ids.size).toBe(Object.keys(doc.paths).length);
  });

  it('gives realistic examples: alice only in agent-naming fields, ids with their newId prefix and shape', () => {
    const examples = Object.entries(doc.paths).map(
      ([path, item]) => [path, item.post!.requestBody?.content['application/json']?.example] as const,
    );
    const misplaced = examples.flatMap(([path, example]) =>
      stringFields(example)
        .filter(([field, value]) => value.toLowerCase() === 'alice' && !AGENT_NAMING_FIELDS.has(field))
        .map(([field]) => `${path} ${field}`),
    );
    expect(misplaced).toEqual([]);
    const ids = examples.flatMap(([path, example]) =>
      stringFields(example)
        .filter(([field]) => field !== 'agent_id' && /(^|_)ids?$/.test(field))
        .map(([field, value]) => [`${path} ${field}`, value] as const),
    );
    expect(ids.length).toBeGreaterThan(10);
    for (const [where, id] of ids) {
      expect(ID_PREFIXES.some((prefix) => id.startsWith(prefix)) && /^[a-z]+_[A-Za-z0-9_-]{22}$/.test(id), `${where}: ${id}`).toBe(true);
    }
  });

  it('renders a default once: not again after a description that states it', () => {
    const schemas = doc.components?.schemas ?? {};
    expect(JSON.stringify(schemas)).toContain('Attempts per run: 1..20, default 3.');
    for (const [path, item] of Object.entries(doc.paths)) {
      const schema = item.post!.requestBody!.content['application/json']!.schema!;
      const rows = renderFields(resolveSchema(schema, schemas), schemas).split('</tr>');
      for (const row of rows) expect((row.match(/\bdefault\b/gi) ?? []).length, `${path}: ${row}`).toBeLessThanOrEqual(1);
    }
  });

  it('accepts every example as written on a fresh server where alice and bob exist (no 400)', async () => {
    const keys = await seedAgentKeys(t.server, ['alice', 'bob']);
    const refused: string[] = [];
    for (const module of defaultModules) {
      for (const route of module.routes) {
        const path = `${module.name}${route.path}`;
        const example = doc.paths[`/functions/v1/${path}`]!.post!.requestBody!.content['application/json']!.example;
        const credential = route.auth.kind === 'bridge' ? t.server.bridgeKey : route.auth.kind === 'none' ? undefined : keys.alice;
        const response = await t.server.call(path, example, { credential });
        // Ids in examples name records a fresh server does not have (404), and some calls need another agent's
        // consent (403) or a DNS record (422): what matters is that no example is refused as invalid.
        if (response.status === 400 || response.status >= 500) refused.push(`${path} ${response.status} ${JSON.stringify(response.body)}`);
      }
    }
    expect(refused).toEqual([]);
  });
});
