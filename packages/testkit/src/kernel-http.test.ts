import { ConflictError, credentialsPort, defineModule, type Principal, provide, routesFor, type SqlDatabase } from '@agentinfra/core';
import { startTestKernel, type TestKernel } from '@agentinfra/core/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { sqlDatabases } from './sql-databases.js';

const principals: Record<string, Principal> = {
  dk_alice: { kind: 'device', agentId: 'alice', deviceId: 'dev_alice' },
  dk_bob: { kind: 'device', agentId: 'bob', deviceId: 'dev_bob' },
  dk_carol: { kind: 'device', agentId: 'carol', deviceId: 'dev_carol' },
  dt_read: { kind: 'delegation', agentId: 'alice', delegationId: 'dlg_1', toAgent: 'bob', permissions: ['toy.read'] },
  dt_dora_1: { kind: 'delegation', agentId: 'dora', delegationId: 'dlg_dora_1', toAgent: 'bob', permissions: ['toy.read'] },
  dt_dora_2: { kind: 'delegation', agentId: 'dora', delegationId: 'dlg_dora_2', toAgent: 'bob', permissions: ['toy.read'] },
  dt_dora_3: { kind: 'delegation', agentId: 'dora', delegationId: 'dlg_dora_3', toAgent: 'carol', permissions: ['toy.read'] },
};

/** The registered agents are those the credentials above act for; the verifier's `missingAgents` answers with the others. */
const registered = new Set(Object.values(principals).flatMap((principal) => (principal.kind === 'bridge' ? [] : [principal.agentId])));
const unregistered = (agentIds: readonly string[]) => agentIds.filter((agentId) => !registered.has(agentId));

const route = routesFor<{ slowMs: number }>();

/** Requests per minute per credential on the test kernel (every test's requests with a credential count). */
const RATE_LIMIT = 10;

/** Turns of the event loop counted while a test ticks them (see the admission test). */
let loopTurn = 0;
/** Calls of the `/slow` handler that have started. */
let slowStarted = 0;
/** When set, `/slow` waits for this instead of its `slowMs`. */
let slowRelease: Promise<void> | null = null;
/** Calls of the `/write` handler. */
let writes = 0;
const toyModule = defineModule({
  name: 'agent-toy',
  ports: ['clock'],
  migrations: {},
  permissions: ['toy.read', 'toy.write'],
  service: () => ({ slowMs: 300 }),
  routes: [
    route({
      path: '/echo',
      summary: 'Echo the agent.',
      request: z.strictObject({ agent_id: z.string(), n: z.number().int().optional() }),
      response: z.object({ agent_id: z.string(), acting: z.string() }),
      auth: { kind: 'agent', permission: 'toy.read', agents: (body) => [body.agent_id] },
      handler: async ({ body, agentId }) => ({ agent_id: body.agent_id, acting: agentId }),
    }),
    route({
      path: '/write',
      summary: 'Needs toy.write.',
      request: z.strictObject({ agent_id: z.string() }),
      response: z.object({ ok: z.boolean() }),
      auth: { kind: 'agent', permission: 'toy.write', agents: (body) => [body.agent_id] },
      handler: async () => {
        writes += 1;
        return { ok: true };
      },
    }),
    route({
      path: '/conflict',
      summary: 'Always 409.',
      request: z.strictObject({}),
      response: z.object({}),
      auth: { kind: 'bridge' },
      handler: async () => {
        throw new ConflictError('taken');
      },
    }),
    route({
      path: '/crash',
      summary: 'Throws a plain error.',
      request: z.strictObject({}),
      response: z.object({}),
      auth: { kind: 'bridge' },
      handler: async () => {
        throw new Error('SELECT secret FROM table failed');
      },
    }),
    route({
      path: '/slow',
      summary: 'Takes a while.',
      request: z.strictObject({}),
      response: z.object({ done: z.boolean() }),
      auth: { kind: 'bridge' },
      handler: async ({ service }) => {
        slowStarted += 1;
        await (slowRelease ?? new Promise((resolve) => setTimeout(resolve, service.slowMs)));
        return { done: true };
      },
    }),
    route({
      path: '/busy',
      summary: 'Holds the event loop for 3 ms and says in which turn it started.',
      request: z.strictObject({}),
      response: z.object({ turn: z.number() }),
      auth: { kind: 'bridge' },
      handler: async () => {
        const turn = loopTurn;
        const until = performance.now() + 3;
        while (performance.now() < until) {
          // Busy on purpose: a handler whose synchronous start is expensive.
        }
        return { turn };
      },
    }),
  ],
  provides: [
    provide(credentialsPort, () => ({
      verify: async ({ credential }) => principals[credential] ?? null,
      missingAgents: async ({ agentIds }) => unregistered(agentIds),
    })),
  ],
});

describe('kernel HTTP layer', () => {
  let server: TestKernel;
  let db: SqlDatabase;
  let cleanup: () => Promise<void>;

  beforeAll(async () => {
    const fixture = await sqlDatabases()[0]!.create();
    cleanup = fixture.cleanup;
    db = fixture.db;
    // A mount answering with read-only headers, as Response.redirect does.
    const redirect = { path: '/elsewhere', fetch: () => Response.redirect('https://example.com/', 302) };
    server = await startTestKernel({
      modules: [toyModule],
      adapters: { sql: fixture.db, mounts: [redirect] },
      config: { http: { rateLimitPerMinute: RATE_LIMIT } },
    });
  });
  afterAll(async () => {
    await server.stop();
    await cleanup();
  });

  it('gives the answer of a mount the request id, also when its headers are read-only', async () => {
    const response = await fetch(`${server.url}/elsewhere`, { redirect: 'manual', headers: { 'x-request-id': 'mount-check' } });
    expect(response.status).toBe(302);
    expect(response.headers.get('location')).toBe('https://example.com/');
    expect(response.headers.get('x-request-id')).toBe('mount-check');
  });

  it('serves /health, /ready and an OpenAPI 3.1 document of every route', async () => {
    expect(await (await fetch(`${server.url}/health`)).json()).toEqual({ status: 'ok' });
    const ready = await fetch(`${server.url}/ready`);
    expect(ready.status).toBe(200);
    expect(((await ready.json()) as { checks: unknown }).checks).toMatchObject({ database: 'ok', 'migrations:core': 'ok' });
    const doc = (await (await fetch(`${server.url}/openapi.json`)).json()) as {
      openapi: string;
      // biome-ignore lint/suspicious/noExplicitAny: the test walks an OpenAPI document by path
      paths: Record<string, { post: any }>;
      components: { schemas: Record<string, { required?: string[] }> };
    };
    expect(doc.openapi).toBe('3.1.0');
    const echo = doc.paths['/functions/v1/agent-toy/echo']?.post;
    expect(echo.requestBody.content['application/json'].schema).toEqual({ $ref: '#/components/schemas/AgentToyEchoRequest' });
    expect(doc.components.schemas.AgentToyEchoRequest?.required).toEqual(['agent_id']);
    expect(echo.security).toEqual([{ deviceKey: [] }, { delegationToken: ['toy.read'] }, { bridgeKey: [] }]);
    expect(doc.paths['/functions/v1/agent-toy/conflict']?.post.security).toEqual([{ bridgeKey: [] }]);
  });

  // Scale walkthrough: every probe read each module's migration table, about 70 statements on PostgreSQL.
  it('reads the migration tables for /ready once, then trusts them for a minute', async () => {
    const migrationReads = async () => {
      const statements: string[] = [];
      const seen = (query: { sql: string }) => {
        if (query.sql.includes('_migrations')) statements.push(query.sql);
      };
      db.knex.on('query', seen);
      try {
        expect((await fetch(`${server.url}/ready`)).status).toBe(200);
      } finally {
        db.knex.off('query', seen);
      }
      return statements.length;
    };
    await migrationReads();
    expect(await migrationReads()).toBe(0);
  });

  it('authorizes devices, delegations and the bridge key per CONTRACT.md', async () => {
    expect((await server.call('agent-toy/echo', { agent_id: 'alice' }, { credential: 'dk_alice' })).body).toEqual({
      agent_id: 'alice',
      acting: 'alice',
    });
    expect((await server.call('agent-toy/echo', { agent_id: 'alice' }, { credential: server.bridgeKey })).body.acting).toBe('alice');
    expect((await server.call('agent-toy/echo', { agent_id: 'alice' }, { credential: 'dk_bob' })).status).toBe(403);
    expect((await server.call('agent-toy/echo', { agent_id: 'alice' }, { credential: 'dt_read' })).status).toBe(200);
    const noPermission = await server.call('agent-toy/write', { agent_id: 'alice' }, { credential: 'dt_read' });
    expect(noPermission.status).toBe(403);
    expect(noPermission.body.error.code).toBe('forbidden');
    expect((await server.call('agent-toy/echo', { agent_id: 'alice' })).status).toBe(401);
    expect((await server.call('agent-toy/echo', { agent_id: 'alice' }, { credential: 'dk_nobody' })).status).toBe(401);
    expect((await server.call('agent-toy/conflict', {}, { credential: 'dk_alice' })).status).toBe(403);
  });

  it('refuses a bridge-key call naming an unregistered agent with 404, before the handler runs', async () => {
    const before = writes;
    const ghost = await server.call('agent-toy/write', { agent_id: 'ghost' }, { credential: server.bridgeKey });
    expect(ghost).toMatchObject({ status: 404, body: { error: { code: 'not_found', message: 'Agent "ghost" does not exist.' } } });
    expect(writes).toBe(before);
    expect((await server.call('agent-toy/write', { agent_id: 'alice' }, { credential: server.bridgeKey })).status).toBe(200);
    expect(writes).toBe(before + 1);
    // A device key naming another agent is refused as before (403), registered or not.
    expect((await server.call('agent-toy/write', { agent_id: 'ghost' }, { credential: 'dk_alice' })).status).toBe(403);
  });

  it('maps domain errors and hides internal ones', async () => {
    const conflict = await server.call('agent-toy/conflict', {}, { credential: server.bridgeKey });
    expect(conflict).toMatchObject({ status: 409, body: { error: { code: 'conflict', message: 'taken' } } });
    const crash = await server.call('agent-toy/crash', {}, { credential: server.bridgeKey });
    expect(crash.status).toBe(500);
    expect(crash.body.error.code).toBe('internal');
    expect(JSON.stringify(crash.body)).not.toContain('SELECT');
  });

  it('starts handlers that arrive together over several loop turns, at most ~4 ms of them per turn', async () => {
    let ticking = true;
    const tick = () => {
      loopTurn += 1;
      if (ticking) setImmediate(tick);
    };
    setImmediate(tick);
    try {
      const answers = await Promise.all(
        Array.from({ length: 6 }, () =>
          server.kernel.app.request('/functions/v1/agent-toy/busy', {
            method: 'POST',
            headers: { authorization: `Bearer ${server.bridgeKey}`, 'content-type': 'application/json' },
            body: '{}',
          }),
        ),
      );
      const turns = await Promise.all(answers.map(async (answer) => ((await answer.json()) as { turn: number }).turn));
      const perTurn = new Map<number, number>();
      for (const turn of turns) perTurn.set(turn, (perTurn.get(turn) ?? 0) + 1);
      // 3 ms each with a 4 ms budget: two per turn at most (without admission all six start in one turn).
      expect(Math.max(...perTurn.values())).toBeLessThanOrEqual(2);
      expect(perTurn.size).toBeGreaterThanOrEqual(3);
    } finally {
      ticking = false;
    }
  });

  it('rejects unknown fields, bad JSON, big bodies and other methods', async () => {
    const extra = await server.call('agent-toy/echo', { agent_id: 'alice', nope: 1 }, { credential: 'dk_alice' });
    expect(extra.status).toBe(400);
    expect(extra.body.error.details.fields).toEqual([{ path: 'nope', message: 'Unknown field.' }]);
    // 19,000 unknown keys (under the member limit): twenty listed and the count, not an answer of 800 KB.
    const many = Object.fromEntries(Array.from({ length: 19_000 }, (_, index) => [`k${index}`, 1]));
    const flood = await server.call('agent-toy/echo', { agent_id: 'alice', ...many }, { credential: 'dk_alice' });
    expect(flood.status).toBe(400);
    expect(flood.body.error.details.fields).toHaveLength(20);
    expect(flood.body.error.details.fields[19]).toEqual({ path: 'k19', message: 'Unknown field.' });
    expect(flood.body.error.message).toBe('The request body does not match the schema (the first 20 of 19000 problems are listed).');
    expect((await server.call('agent-toy/echo', '{', { credential: 'dk_alice' })).status).toBe(400);
    expect((await server.call('agent-toy/echo', { agent_id: 'a', pad: 'x'.repeat(2_000_000) }, { credential: 'dk_alice' })).status).toBe(
      413,
    );
    const put = await server.call('agent-toy/echo', {}, { method: 'PUT', credential: 'dk_alice' });
    expect(put.status).toBe(405);
    expect(put.headers.get('allow')).toBe('POST');
    expect(put.body).toEqual({ error: { code: 'method_not_allowed', message: 'PUT is not allowed here; use POST.' } });
    // Review: the server's own GET endpoints answered other methods 404 `No route`.
    for (const path of ['/health', '/ready', '/openapi.json']) {
      const posted = await fetch(`${server.url}${path}`, { method: 'POST' });
      expect(posted.status).toBe(405);
      expect(posted.headers.get('allow')).toBe('GET, HEAD');
      expect(await posted.json()).toMatchObject({ error: { code: 'method_not_allowed' } });
    }
  });

  it('limits requests per credential with 429 and Retry-After', async () => {
    const statuses: number[] = [];
    let retryAfter: string | null = null;
    for (let i = 0; i < RATE_LIMIT + 3; i += 1) {
      const response = await server.call('agent-toy/write', { agent_id: 'bob' }, { credential: 'dk_bob' });
      statuses.push(response.status);
      if (response.status === 429) retryAfter = response.headers.get('retry-after');
    }
    expect(statuses.filter((status) => status === 200)).toHaveLength(RATE_LIMIT - 1);
    expect(statuses.at(-1)).toBe(429);
    expect(Number(retryAfter)).toBeGreaterThanOrEqual(1);
    expect((await server.call('agent-toy/conflict', {}, { credential: server.bridgeKey })).status).toBe(409);
  });

  it('gives the delegation tokens one agent gave another one limit between them, however many it mints', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < RATE_LIMIT + 2; i += 1) {
      const credential = i % 2 === 0 ? 'dt_dora_1' : 'dt_dora_2';
      statuses.push((await server.call('agent-toy/echo', { agent_id: 'dora' }, { credential })).status);
    }
    expect(statuses.filter((status) => status === 200)).toHaveLength(RATE_LIMIT);
    const refused = await server.call('agent-toy/echo', { agent_id: 'dora' }, { credential: 'dt_dora_1' });
    expect(refused.status).toBe(429);
    expect(refused.body.error.message).toContain('the delegation tokens agent "dora" gave agent "bob"');
    // Another agent dora delegates to has a window of its own.
    expect((await server.call('agent-toy/echo', { agent_id: 'dora' }, { credential: 'dt_dora_3' })).status).toBe(200);
  });

  it('counts requests that fail validation or authorization against the rate limit too', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < RATE_LIMIT; i += 1) {
      const body = i % 2 === 0 ? { agent_id: 'carol', unknown: 1 } : { agent_id: 'alice' };
      statuses.push((await server.call('agent-toy/echo', body, { credential: 'dk_carol' })).status);
    }
    expect(new Set(statuses)).toEqual(new Set([400, 403]));
    const next = await server.call('agent-toy/echo', { agent_id: 'carol' }, { credential: 'dk_carol' });
    expect(next.status).toBe(429);
    expect(next.body.error.code).toBe('rate_limited');
  });

  it('closes the connection after a body refused while it arrived as too large', async () => {
    const huge = await server.call(
      'agent-toy/echo',
      { agent_id: 'alice', padding: 'x'.repeat(1_100_000) },
      { credential: server.bridgeKey },
    );
    expect(huge.status).toBe(413);
    expect(huge.headers.get('connection')).toBe('close');
  });

  it('accepts Supabase-style apikey headers and answers CORS preflights', async () => {
    const response = await server.call('agent-toy/echo', { agent_id: 'alice', n: 1 }, { headers: { apikey: 'dk_alice' } });
    expect(response.status).toBe(200);
    const preflight = await fetch(`${server.url}/functions/v1/agent-toy/echo`, {
      method: 'OPTIONS',
      headers: {
        origin: 'https://app.example',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'authorization,apikey,content-type,x-client-info',
      },
    });
    expect(preflight.status).toBeLessThan(300);
    expect(preflight.headers.get('access-control-allow-headers')).toContain('apikey');
  });
});

describe('kernel shutdown', () => {
  it('finishes in-flight requests before closing', async () => {
    const fixture = await sqlDatabases()[0]!.create();
    const server = await startTestKernel({ modules: [toyModule], adapters: { sql: fixture.db } });
    let release = () => {};
    slowRelease = new Promise<void>((resolve) => {
      release = resolve;
    });
    try {
      const started = slowStarted;
      const inFlight = server.call('agent-toy/slow', {}, { credential: server.bridgeKey });
      await expect.poll(() => slowStarted, { timeout: 10_000, interval: 5 }).toBe(started + 1);
      // The handler holds its request until the stop has begun: it is in flight for sure.
      const stopping = server.stop();
      release();
      await stopping;
      expect((await inFlight).body).toEqual({ done: true });
      await expect(fetch(`${server.url}/health`)).rejects.toThrow();
    } finally {
      release();
      slowRelease = null;
      await server.stop();
      await fixture.cleanup();
    }
  });
});
