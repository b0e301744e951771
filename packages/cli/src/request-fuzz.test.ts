import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createFsBlobStore } from '@agentinfra/adapter-fs';
import { type AnyRoute, MAX_JSON_DEPTH } from '@agentinfra/core';
import { startTestKernel, type TestKernel } from '@agentinfra/core/testing';
import { defaultModules } from '@agentinfra/modules';
import { sqlDatabases } from '@agentinfra/testkit';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createHashEmbedder } from './hash-embedder.test-support.js';

/**
 * Property-based fuzzing of every route (#11): bodies generated from each
 * route's request schema and example, then mutated (wrong types, missing and
 * extra fields, `__proto__` keys, extreme numbers and lengths, deep nesting),
 * and raw bodies no JSON client would send. Whatever arrives: never a 5xx,
 * never a reset connection, every error in the documented shape, and a
 * refused request changes no row. Seeded and bounded so CI stays fast.
 */
const SEED = 20261124;
const RUNS_PER_ROUTE = 12;

const errorShape = z.strictObject({
  error: z.strictObject({ code: z.string().regex(/^[a-z_]+$/), message: z.string().min(1), details: z.unknown().optional() }),
});

const nested = (depth: number) => JSON.parse(`${'['.repeat(depth)}${']'.repeat(depth)}`) as unknown;

/** Values no schema expects: odd JSON of every type, extremes, and nesting around the depth limit. */
const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  fc.jsonValue({ maxDepth: 3 }),
  fc.constantFrom(
    '',
    ' ',
    'a'.repeat(70_000),
    '\u0000\u0001\u001f',
    '\ud800',
    '𝓊𝓃𝒾𝒸𝑜𝒹𝑒‮',
    '../../etc/passwd',
    "'; DROP TABLE x; --",
    '%',
    '_%\\',
    '<script>alert(1)</script>',
    '@every 0s',
    '* * * * * * * *',
    'team:',
    'http://169.254.169.254/latest/meta-data',
  ),
  fc.constantFrom(0, -0, -1, 1.5, 1e308, -1e308, 2 ** 53 + 1, Number.MAX_SAFE_INTEGER, 4_294_967_296),
  fc.constantFrom(true, false, null, [], {}),
  fc.integer({ min: MAX_JSON_DEPTH - 3, max: MAX_JSON_DEPTH + 3 }).map(nested),
);

/** The top-level field names of a route's request schema. */
function fieldsOf(route: AnyRoute<unknown>): string[] {
  const schema = z.toJSONSchema(route.request, { io: 'input', unrepresentable: 'any' }) as { properties?: Record<string, unknown> };
  return Object.keys(schema.properties ?? {});
}

/** A body for `route` as JSON text: its example (or `{}`) with one or two mutations. */
function bodyFor(route: AnyRoute<unknown>): fc.Arbitrary<string> {
  const seed = (route.example ?? {}) as Record<string, unknown>;
  const fields = fieldsOf(route);
  const field = fields.length > 0 ? fc.constantFrom(...fields) : fc.constant('agent_id');
  const mutation: fc.Arbitrary<string> = fc.oneof(
    fc.constant(JSON.stringify(seed)),
    field.map((name) => {
      const { [name]: _dropped, ...rest } = seed;
      return JSON.stringify(rest);
    }),
    fc.tuple(field, hostileValue).map(([name, value]) => JSON.stringify({ ...seed, [name]: value })),
    fc.tuple(field, hostileValue, field, hostileValue).map(([a, first, b, second]) => JSON.stringify({ ...seed, [a]: first, [b]: second })),
    fc.tuple(fc.constantFrom('__proto__', 'constructor', 'prototype', 'toString', 'extra_field'), hostileValue).map(([name, value]) => {
      const rest = JSON.stringify(seed).slice(1);
      return `{${JSON.stringify(name)}:${JSON.stringify(value)}${rest === '}' ? '}' : `,${rest}`}`;
    }),
    hostileValue.map((value) => JSON.stringify(value)),
  );
  return mutation;
}

/**
 * Raw bodies: not UTF-8, empty, white space, over the size limit, far too deep, truncated, not JSON.
 * `reachesRoute`: the kernel reads it as a JSON value (an empty body is `{}`), so the route's schema and maybe its
 * handler see it; every other one the kernel's body reader refuses (413, 415 or 400) after authentication and before
 * the route's own code, with the same code path for every route and no SQL.
 */
const rawBodies: Array<{ name: string; body: Buffer; type?: string; reachesRoute?: true }> = [
  { name: 'invalid UTF-8', body: Buffer.from([0x7b, 0x22, 0xc3, 0x28, 0x22, 0x3a, 0xff, 0x7d]) },
  { name: 'empty', body: Buffer.alloc(0), reachesRoute: true },
  { name: 'white space', body: Buffer.from(' \n\t '), reachesRoute: true },
  { name: 'over 1 MiB', body: Buffer.from(`{"agent_id":"${'a'.repeat(1_100_000)}"}`) },
  { name: '100,000 deep', body: Buffer.from(`{"value":${'['.repeat(100_000)}${']'.repeat(100_000)}}`) },
  { name: 'truncated', body: Buffer.from('{"agent_id":"alice",') },
  { name: 'not JSON', body: Buffer.from('agent_id=alice') },
  { name: 'JSON as text/plain', body: Buffer.from('{"agent_id":"alice"}'), type: 'text/plain' },
  { name: 'UTF-16 BOM', body: Buffer.from('\ufeff{"agent_id":"alice"}', 'utf16le') },
  { name: 'NUL bytes', body: Buffer.from('{"agent_id":"al\u0000ice"}') },
];

describe.each(sqlDatabases())('request fuzzing of every route on $name (#11)', ({ name, create }) => {
  let server: TestKernel;
  let cleanup: () => Promise<void>;
  let tables: string[] = [];
  const credentials: Record<string, string> = {};

  /** Row counts of every table, in one statement. */
  async function rowCounts(): Promise<Record<string, unknown>> {
    const columns = tables.map((table, index) => `(SELECT count(*) FROM "${table}") AS c${index}`).join(', ');
    const result = await server.kernel.sql.knex.raw(`SELECT ${columns}`);
    return (Array.isArray(result) ? result[0] : result.rows[0]) as Record<string, unknown>;
  }

  function credentialFor(route: AnyRoute<unknown>): string | undefined {
    if (route.auth.kind === 'none') return undefined;
    if (route.auth.kind === 'bridge') return server.bridgeKey;
    return credentials.alice;
  }

  async function send(path: string, body: Buffer | string, credential: string | undefined, type = 'application/json') {
    const response = await fetch(`${server.url}/functions/v1/${path}`, {
      method: 'POST',
      headers: { 'content-type': type, ...(credential ? { authorization: `Bearer ${credential}` } : {}) },
      body,
    });
    const text = await response.text();
    return { status: response.status, text };
  }

  async function expectHandled(label: string, attempt: () => Promise<{ status: number; text: string }>) {
    const before = await rowCounts();
    const { status, text } = await attempt();
    expect(status, `${label}: ${text.slice(0, 300)}`).toBeLessThan(500);
    if (status >= 400) {
      expect(errorShape.safeParse(JSON.parse(text)).success, `${label}: ${text.slice(0, 300)}`).toBe(true);
      expect(await rowCounts(), `${label} was refused with ${status} but changed rows`).toEqual(before);
    }
  }

  beforeAll(async () => {
    const fixture = await create();
    cleanup = fixture.cleanup;
    const blobs = createFsBlobStore({
      dir: mkdtempSync(join(tmpdir(), 'agentinfra-fuzz-')),
      publicUrl: 'http://127.0.0.1',
      signingKey: 'k'.repeat(32),
    });
    server = await startTestKernel({
      modules: defaultModules,
      adapters: { sql: fixture.db, embedder: createHashEmbedder(), blobStore: blobs.store, mounts: [blobs.mount] },
      config: { jobs: { enabled: false } },
      moduleConfigs: { 'agent-gateway': { httpPort: 0, dnsServers: ['127.0.0.1:1'] }, 'agent-postbox': { smtp: { port: 0 } } },
    });
    const bridge = { credential: server.bridgeKey };
    for (const agent of ['alice', 'bob']) {
      await server.call('agent-identity/agents/create', { agent_id: agent, display_name: agent }, bridge);
      credentials[agent] = (await server.call('agent-identity/device/issue', { agent_id: agent, label: 'fuzz' }, bridge)).body.device_key;
    }
    const knex = server.kernel.sql.knex;
    tables =
      knex.client.config.client === 'pg'
        ? (
            await knex.raw<{ rows: Array<{ table_name: string }> }>(
              `SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'`,
            )
          ).rows.map((row) => row.table_name)
        : (await knex.raw<Array<{ name: string }>>(`SELECT name FROM sqlite_master WHERE type = 'table'`)).map((row) => row.name);
    // The audit log records every bridge-key use, refused ones included (#15): that row is the point, not a partial write.
    tables = tables.filter((table) => !table.startsWith('core_audit'));
    expect(tables.length).toBeGreaterThan(10);
  });

  afterAll(async () => {
    await server.stop();
    await cleanup();
  });

  const routes = defaultModules.flatMap((module) =>
    (module.routes as readonly AnyRoute<unknown>[]).map((route) => ({ path: `${module.name}${route.path}`, route })),
  );

  it.each(routes)('$path: mutated bodies never get a 5xx, and refused ones change nothing', async ({ path, route }) => {
    await fc.assert(
      fc.asyncProperty(bodyFor(route), (body) =>
        expectHandled(`${path} ${body.slice(0, 200)}`, () => send(path, body, credentialFor(route))),
      ),
      { numRuns: RUNS_PER_ROUTE, seed: SEED, endOnFailure: true },
    );
  });

  // The bodies the route's code sees go to every route on every engine. The ones the body reader refuses go to every
  // route on the embedded database, and on the other engines to one route of each kind of authentication (the only
  // step before the reader, and the one that reads the database): nothing after the reader differs by engine.
  const oneRoutePerAuthKind = [...new Map(routes.map((entry) => [entry.route.auth.kind, entry])).values()];
  it.each(rawBodies)(
    'raw body "$name": never a 5xx from any route, and refused it changes nothing',
    async ({ name: bodyName, body, type, reachesRoute }) => {
      for (const { path, route } of reachesRoute || name === 'sqlite' ? routes : oneRoutePerAuthKind) {
        await expectHandled(`${path} with ${bodyName}`, () => send(path, body, credentialFor(route), type));
      }
    },
  );
});
