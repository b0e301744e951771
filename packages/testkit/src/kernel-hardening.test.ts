import { request } from 'node:http';
import {
  AuthenticationError,
  credentialsPort,
  defineModule,
  MAX_JSON_CONTAINERS,
  MAX_JSON_DEPTH,
  MAX_JSON_MEMBERS,
  type Principal,
  provide,
  routesFor,
} from '@agentinfra/core';
import { startTestKernel, type TestKernel } from '@agentinfra/core/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { sqlDatabases } from './sql-databases.js';

/** Regression tests for #11: transport-level refusals happen before any schema or handler runs. */
const principals: Record<string, Principal> = { dk_alice: { kind: 'device', agentId: 'alice', deviceId: 'dev_alice' } };

/** The registered agents are those the credentials above act for; the verifier's `missingAgents` answers with the others. */
const registered = new Set(Object.values(principals).flatMap((principal) => (principal.kind === 'bridge' ? [] : [principal.agentId])));
const unregistered = (agentIds: readonly string[]) => agentIds.filter((agentId) => !registered.has(agentId));

const stored: unknown[] = [];
const route = routesFor<null>();
const storeModule = defineModule({
  name: 'agent-store',
  ports: [],
  migrations: {},
  permissions: ['store.write'],
  service: () => null,
  routes: [
    route({
      path: '/put',
      summary: 'Keeps any JSON value.',
      request: z.strictObject({ agent_id: z.string(), value: z.json() }),
      response: z.object({ ok: z.boolean() }),
      auth: { kind: 'agent', permission: 'store.write', agents: (body) => [body.agent_id] },
      handler: async ({ body }) => {
        stored.push(body.value);
        return { ok: true };
      },
    }),
    route({
      path: '/redeem',
      summary: 'Checks a proof in the body, like a grant-token fetch.',
      request: z.strictObject({ token: z.string() }),
      response: z.object({ ok: z.boolean() }),
      auth: { kind: 'none' },
      handler: async ({ body }) => {
        if (body.token !== 'g_good') throw new AuthenticationError('The token is unknown.');
        return { ok: true };
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

/** POSTs raw bytes with exactly the headers given (fetch would add a content type to a string body). */
function post(url: string, body: Buffer, headers: Record<string, string>, path = '/functions/v1/agent-store/put') {
  return new Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: unknown }>((resolve, reject) => {
    const target = new URL(`${url}${path}`);
    const outgoing = request(target, { method: 'POST', headers: { 'content-length': String(body.length), ...headers } }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () =>
        resolve({ status: response.statusCode ?? 0, headers: response.headers, body: JSON.parse(Buffer.concat(chunks).toString()) }),
      );
    });
    outgoing.on('error', reject);
    outgoing.end(body);
  });
}

const json = (value: unknown) => Buffer.from(JSON.stringify(value));
const auth = { authorization: 'Bearer dk_alice' };

describe.each(sqlDatabases())('kernel transport rules on $name (#11)', ({ create }) => {
  let server: TestKernel;
  let cleanup: () => Promise<void>;

  beforeAll(async () => {
    const fixture = await create();
    cleanup = fixture.cleanup;
    server = await startTestKernel({
      modules: [storeModule],
      adapters: { sql: fixture.db },
      config: { http: { failedAuthPerMinute: 5, trustProxyHops: 1 } },
    });
  });

  afterAll(async () => {
    await server.stop();
    await cleanup();
  });

  it('accepts application/json with or without a UTF-8 charset', async () => {
    for (const type of ['application/json', 'application/json; charset=utf-8', 'Application/JSON;charset="UTF-8"']) {
      expect((await post(server.url, json({ agent_id: 'alice', value: 1 }), { ...auth, 'content-type': type })).status, type).toBe(200);
    }
  });

  it('answers 415 to a JSON body sent as text/plain, form data, another charset or no content type, and stores nothing', async () => {
    const before = stored.length;
    for (const headers of [
      { 'content-type': 'text/plain' },
      { 'content-type': 'application/x-www-form-urlencoded' },
      { 'content-type': 'application/json; charset=latin1' },
      {} as Record<string, string>,
    ]) {
      const response = await post(server.url, json({ agent_id: 'alice', value: 1 }), { ...auth, ...headers });
      expect(response.status, JSON.stringify(headers)).toBe(415);
      expect(response.body).toEqual({ error: { code: 'unsupported_media_type', message: expect.stringContaining('application/json') } });
    }
    expect(stored.length).toBe(before);
  });

  it('answers 400 to bytes that are not UTF-8 instead of decoding them lossily', async () => {
    const body = Buffer.concat([Buffer.from('{"agent_id":"alice","value":"'), Buffer.from([0xc3, 0x28, 0xff]), Buffer.from('"}')]);
    const response = await post(server.url, body, { ...auth, 'content-type': 'application/json' });
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ error: { code: 'invalid_request', message: expect.stringMatching(/UTF-8/) } });
  });

  it('answers 400 to a string escaping a lone UTF-16 surrogate, which no UTF-8 store could keep', async () => {
    const before = stored.length;
    for (const text of ['"t\\ud800"', '"\\udc00x"', '"\\ud83d\\u0041"', '"\\ud83d"', '{"\\ud800":1}']) {
      const body = Buffer.from(`{"agent_id":"alice","value":${text}}`);
      const response = await post(server.url, body, { ...auth, 'content-type': 'application/json' });
      expect(response.status, text).toBe(400);
      expect(response.body).toMatchObject({ error: { code: 'invalid_request', message: expect.stringMatching(/lone UTF-16 surrogate/) } });
    }
    expect(stored.length).toBe(before);
    for (const text of ['"\\ud83d\\ude00"', '"\\\\ud800"', '"\\u00e9"']) {
      const body = Buffer.from(`{"agent_id":"alice","value":${text}}`);
      expect((await post(server.url, body, { ...auth, 'content-type': 'application/json' })).status, text).toBe(200);
    }
    expect(stored.slice(-3)).toEqual(['\u{1f600}', '\\ud800', 'é']);
  });

  it('answers 400 to a string holding NUL, which PostgreSQL text cannot store, on every engine', async () => {
    const before = stored.length;
    for (const text of ['"a\\u0000b"', '{"k\\u0000":1}', '["\\u0000"]']) {
      const body = Buffer.from(`{"agent_id":"alice","value":${text}}`);
      const response = await post(server.url, body, { ...auth, 'content-type': 'application/json' });
      expect(response.status, text).toBe(400);
      expect(response.body).toMatchObject({ error: { code: 'invalid_request', message: expect.stringMatching(/NUL character/) } });
    }
    expect(stored.length).toBe(before);
    expect(
      (await post(server.url, Buffer.from('{"agent_id":"alice","value":"\\\\u0000"}'), { ...auth, 'content-type': 'application/json' }))
        .status,
    ).toBe(200);
  });

  it('answers 415 to a compressed body, which the server does not decode', async () => {
    const before = stored.length;
    for (const coding of ['gzip', 'br', 'deflate, gzip']) {
      const response = await post(server.url, json({ agent_id: 'alice', value: 1 }), {
        ...auth,
        'content-type': 'application/json',
        'content-encoding': coding,
      });
      expect(response.status, coding).toBe(415);
      expect(response.body).toMatchObject({ error: { code: 'unsupported_media_type', message: expect.stringContaining('uncompressed') } });
    }
    expect(stored.length).toBe(before);
    const identity = { ...auth, 'content-type': 'application/json', 'content-encoding': 'identity' };
    expect((await post(server.url, json({ agent_id: 'alice', value: 1 }), identity)).status).toBe(200);
  });

  it('echoes a request id of visible ASCII and replaces any other with a UUID', async () => {
    const echo = async (id: string) =>
      (await post(server.url, json({ agent_id: 'alice', value: 1 }), { ...auth, 'content-type': 'application/json', 'x-request-id': id }))
        .headers['x-request-id'];
    expect(await echo('req-42_ok.1')).toBe('req-42_ok.1');
    const replaced = await echo(Buffer.from('日本', 'utf8').toString('latin1'));
    expect(replaced).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(await echo('x'.repeat(300))).toBe('x'.repeat(128));
  });

  it(`answers 400 naming the limit to a body nested deeper than ${MAX_JSON_DEPTH} levels, however deep`, async () => {
    const before = stored.length;
    for (const depth of [MAX_JSON_DEPTH + 1, 3_000, 200_000]) {
      const value = `${'['.repeat(depth)}${']'.repeat(depth)}`;
      const body = Buffer.from(`{"agent_id":"alice","value":${value}}`);
      const response = await post(server.url, body, { ...auth, 'content-type': 'application/json' });
      expect(response.status, String(depth)).toBe(400);
      expect(response.body).toMatchObject({ error: { code: 'invalid_request', details: { max_depth: MAX_JSON_DEPTH } } });
    }
    expect(stored.length).toBe(before);
    const deepest = `${'['.repeat(MAX_JSON_DEPTH - 1)}${']'.repeat(MAX_JSON_DEPTH - 1)}`;
    const ok = await post(server.url, Buffer.from(`{"agent_id":"alice","value":${deepest}}`), {
      ...auth,
      'content-type': 'application/json',
    });
    expect(ok.status).toBe(200);
  });

  it(`answers 400 naming the limit to a body with more than ${MAX_JSON_CONTAINERS} arrays and objects`, async () => {
    const before = stored.length;
    const withObjects = (count: number) => Buffer.from(`{"agent_id":"alice","value":[${Array(count).fill('{}').join(',')}]}`);
    // The body object and the array count too.
    const refused = await post(server.url, withObjects(MAX_JSON_CONTAINERS - 1), { ...auth, 'content-type': 'application/json' });
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({ error: { code: 'invalid_request', details: { max_containers: MAX_JSON_CONTAINERS } } });
    expect(stored.length).toBe(before);
    const ok = await post(server.url, withObjects(MAX_JSON_CONTAINERS - 2), { ...auth, 'content-type': 'application/json' });
    expect(ok.status).toBe(200);
  });

  it(`answers 400 naming the limit to a body with more than ${MAX_JSON_MEMBERS} object members, before any validator lists them`, async () => {
    const before = stored.length;
    const withMembers = (count: number) =>
      Buffer.from(`{"agent_id":"alice","value":{${Array.from({ length: count }, (_, index) => `"k${index}":1`).join(',')}}}`);
    // The body's own two members count too.
    const refused = await post(server.url, withMembers(MAX_JSON_MEMBERS - 1), { ...auth, 'content-type': 'application/json' });
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({ error: { code: 'invalid_request', details: { max_members: MAX_JSON_MEMBERS } } });
    expect(stored.length).toBe(before);
    const ok = await post(server.url, withMembers(MAX_JSON_MEMBERS - 2), { ...auth, 'content-type': 'application/json' });
    expect(ok.status).toBe(200);
  });

  it('does not count brackets inside strings as nesting', async () => {
    const response = await post(server.url, json({ agent_id: 'alice', value: '['.repeat(10_000) }), {
      ...auth,
      'content-type': 'application/json',
    });
    expect(response.status).toBe(200);
  });

  it('limits failed authentications per client address with 429 and Retry-After, also for valid keys, and only that address', async () => {
    const from = (address: string, credential: string) =>
      post(server.url, json({ agent_id: 'alice', value: 1 }), {
        authorization: `Bearer ${credential}`,
        'content-type': 'application/json',
        'x-forwarded-for': `198.51.100.1, ${address}`,
      });
    for (let attempt = 0; attempt < 5; attempt++) expect((await from('203.0.113.9', 'dk_guess')).status).toBe(401);
    const refused = await from('203.0.113.9', 'dk_guess');
    expect(refused.status).toBe(429);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect(refused.body).toMatchObject({ error: { code: 'rate_limited' } });
    expect((await from('203.0.113.9', 'dk_alice')).status).toBe(429);
    expect((await from('203.0.113.10', 'dk_alice')).status).toBe(200);
    expect((await from('203.0.113.10', 'dk_guess')).status).toBe(401);
  });

  it('counts failed authentications of IPv6 clients by their /64 network, not by each address in it', async () => {
    const from = (address: string, credential: string) =>
      post(server.url, json({ agent_id: 'alice', value: 1 }), {
        authorization: `Bearer ${credential}`,
        'content-type': 'application/json',
        'x-forwarded-for': address,
      });
    for (let host = 1; host <= 5; host++) expect((await from(`2001:db8:7:7::${host.toString(16)}`, 'dk_guess')).status).toBe(401);
    const refused = await from('2001:db8:7:7:abcd::99', 'dk_alice');
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({ error: { message: expect.stringContaining('2001:db8:7:7::/64') } });
    expect((await from('2001:db8:7:8::1', 'dk_alice')).status).toBe(200);
  });

  it('counts a bad proof in the body of a route without a credential against the same limit', async () => {
    const redeem = (address: string, token: string) =>
      post(
        server.url,
        json({ token }),
        { 'content-type': 'application/json', 'x-forwarded-for': address },
        '/functions/v1/agent-store/redeem',
      );
    expect((await redeem('203.0.113.30', 'g_good')).status).toBe(200);
    for (let attempt = 0; attempt < 5; attempt++) expect((await redeem('203.0.113.30', 'g_guess')).status).toBe(401);
    const refused = await redeem('203.0.113.30', 'g_good');
    expect(refused.status).toBe(429);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect((await redeem('203.0.113.31', 'g_good')).status).toBe(200);
  });

  it('counts failed authentications of kernel surfaces through kernel.authenticate', async () => {
    for (let attempt = 0; attempt < 5; attempt++) expect(await server.kernel.authenticate(null, { client: '192.0.2.44' })).toBeNull();
    await expect(server.kernel.authenticate('dk_alice', { client: '192.0.2.44' })).rejects.toMatchObject({ status: 429 });
    expect(await server.kernel.authenticate('dk_alice', { client: '192.0.2.45' })).toMatchObject({ agentId: 'alice' });
    expect(await server.kernel.authenticate(server.bridgeKey)).toEqual({ kind: 'bridge' });
  });
});
