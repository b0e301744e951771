import { sqlDatabases } from '@agentinfra/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sessionCookie } from './security-headers.js';
import { createSessionStore } from './sessions.js';
import { type ConsoleTestServer, startConsoleTestServer } from './test-support/console-test-server.js';

const FORM = 'application/x-www-form-urlencoded';

describe('console sessions', () => {
  it('end after the idle time and on delete, and refresh on use', () => {
    let now = 0;
    const store = createSessionStore({ idleMs: 1_000, now: () => now });
    const session = store.create();
    now = 900;
    expect(store.get(session.id)).toBe(session);
    now = 1_800;
    expect(store.get(session.id)).toBe(session);
    now = 2_801;
    expect(store.get(session.id)).toBeNull();
    const other = store.create();
    store.delete(other.id);
    expect(store.get(other.id)).toBeNull();
    expect(store.get(undefined)).toBeNull();
  });

  it('end at the absolute lifetime however busy', () => {
    let now = 0;
    const store = createSessionStore({ idleMs: 1_000, maxAgeMs: 5_000, now: () => now });
    const session = store.create();
    for (now = 900; now < 5_000; now += 900) expect(store.get(session.id)).toBe(session);
    now = 5_000;
    expect(store.get(session.id)).toBeNull();
  });

  it('keep at most maxSessions, ending the one idle longest', () => {
    let now = 0;
    const store = createSessionStore({ idleMs: 10_000, maxSessions: 3, now: () => now });
    const first = store.create();
    now = 1;
    const second = store.create();
    now = 2;
    const third = store.create();
    now = 3;
    expect(store.get(first.id)).toBe(first);
    now = 4;
    const fourth = store.create();
    expect(store.get(second.id)).toBeNull();
    for (const kept of [first, third, fourth]) expect(store.get(kept.id)).toBe(kept);
  });

  it('cookies are HttpOnly and SameSite=Strict on the console path, Secure over HTTPS, without a lifetime of their own', () => {
    const plain = sessionCookie('abc', { secure: false, path: '/console' });
    expect(plain).toBe('agentinfra_console=abc; Path=/console; HttpOnly; SameSite=Strict');
    expect(sessionCookie('abc', { secure: true, path: '/console' })).toMatch(/; Secure$/);
    expect(sessionCookie(null, { secure: false, path: '/console' })).toContain('Max-Age=0');
  });
});

describe.each(sqlDatabases())('console HTTP security on $name (#16)', ({ create }) => {
  let t: ConsoleTestServer;
  let cleanup: () => Promise<void>;

  beforeAll(async () => {
    const fixture = await create();
    cleanup = fixture.cleanup;
    t = await startConsoleTestServer(fixture.db);
  });

  afterAll(async () => {
    await t?.server.stop();
    await cleanup?.();
  });

  const signIn = async (key: string, origin = t.server.url) =>
    fetch(`${t.server.url}/console/login`, {
      method: 'POST',
      headers: { origin, 'content-type': FORM },
      body: new URLSearchParams({ key }).toString(),
      redirect: 'manual',
    });

  it('sends the strict CSP on every response, loads one small script, and asks for sign-in without a session', async () => {
    for (const path of ['/console', '/console/agents', '/console/login', '/console/static/console.js', '/console/nope']) {
      const response = await fetch(`${t.server.url}${path}`, { redirect: 'manual' });
      expect(response.headers.get('content-security-policy'), path).toMatch(
        /default-src 'none'; script-src 'self'; style-src 'self'.*frame-ancestors 'none'; form-action 'self'/,
      );
    }
    const page = await fetch(`${t.server.url}/console/agents`, { redirect: 'manual' });
    expect(page.status).toBe(303);
    expect(page.headers.get('location')).toBe('/console/login?next=%2Fconsole%2Fagents');
    const login = await (await fetch(`${t.server.url}/console/login`)).text();
    expect(login).not.toMatch(/<script>|<script [^>]*>[^<]/);
    const scripts = [...login.matchAll(/<script src="([^"]+)"/g)].map((match) => match[1] as string);
    expect(scripts).toEqual(['/console/static/console.js']);
    const sizes = await Promise.all(scripts.map(async (src) => (await (await fetch(`${t.server.url}${src}`)).arrayBuffer()).byteLength));
    expect(sizes.reduce((sum, size) => sum + size, 0)).toBeLessThan(250 * 1024);
  });

  it('refuses a sign-in or a form from another origin, and a form without the session token', async () => {
    expect((await signIn(t.server.bridgeKey, 'https://evil.example')).status).toBe(403);
    const signedIn = await signIn(t.server.bridgeKey);
    expect(signedIn.status).toBe(303);
    const cookie = (signedIn.headers.get('set-cookie') ?? '').split(';')[0] as string;
    const html = await (await fetch(`${t.server.url}/console/agents`, { headers: { cookie } })).text();
    const csrf = /name="_csrf" value="([^"]+)"/.exec(html)?.[1] as string;
    expect(csrf).toBeTruthy();
    const post = (headers: Record<string, string>, body: Record<string, string>) =>
      fetch(`${t.server.url}/console/agents/create`, {
        method: 'POST',
        headers: { cookie, 'content-type': FORM, ...headers },
        body: new URLSearchParams(body).toString(),
        redirect: 'manual',
      });
    expect((await post({ origin: t.server.url }, { agent_id: 'mallory', display_name: 'm' })).status).toBe(403);
    expect((await post({ origin: 'https://evil.example' }, { _csrf: csrf, agent_id: 'mallory', display_name: 'm' })).status).toBe(403);
    const wrong = `${csrf.slice(0, -1)}${csrf.endsWith('A') ? 'B' : 'A'}`;
    expect((await post({ origin: t.server.url }, { _csrf: wrong, agent_id: 'mallory', display_name: 'm' })).status).toBe(403);
    expect(
      (await t.server.call('agent-identity/admin/agents/get', { agent_id: 'mallory' }, { credential: t.server.bridgeKey })).status,
    ).toBe(404);
    const created = await post({ origin: t.server.url }, { _csrf: csrf, agent_id: 'dave', display_name: 'Dave' });
    expect(created.status).toBe(303);
    expect((await t.server.call('agent-identity/admin/agents/get', { agent_id: 'dave' }, { credential: t.server.bridgeKey })).status).toBe(
      200,
    );
    const audit = await t.server.call(
      'agent-identity/audit/list',
      { action: 'agent.create', agent_id: 'dave' },
      { credential: t.server.bridgeKey },
    );
    // The console's in-process API call is recorded for the operator's address, not `unknown`.
    expect(audit.body.events.map((event: { client: string }) => event.client)).toEqual(['127.0.0.1']);
  });

  it('audits sign-ins, sign-outs and actions, but not page views', async () => {
    const bridge = { credential: t.server.bridgeKey };
    const events = async () =>
      (await t.server.call('agent-identity/audit/list', { limit: 200 }, bridge)).body.events as Array<{
        action: string;
        outcome: string;
        target: string | null;
        request_id: string | null;
        actor: { kind: string };
      }>;
    await t.server.call('agent-identity/agents/create', { agent_id: 'frank', display_name: 'Frank' }, bridge);
    const deviceKey = (await t.server.call('agent-identity/device/issue', { agent_id: 'frank', label: 'laptop' }, bridge)).body.device_key;
    const before = (await events()).length;
    // A valid key that is not the bridge key (a wrong one would count against the failed-authentication limit tested below).
    expect((await signIn(deviceKey)).status).toBe(401);
    const signedIn = await signIn(t.server.bridgeKey);
    const cookie = (signedIn.headers.get('set-cookie') ?? '').split(';')[0] as string;
    for (const page of ['/console', '/console/agents', '/console/memory', '/console/audit']) {
      expect((await fetch(`${t.server.url}${page}`, { headers: { cookie } })).status, page).toBe(200);
    }
    const html = await (await fetch(`${t.server.url}/console/agents`, { headers: { cookie } })).text();
    const csrf = /name="_csrf" value="([^"]+)"/.exec(html)?.[1] as string;
    const created = await fetch(`${t.server.url}/console/agents/create`, {
      method: 'POST',
      headers: { cookie, origin: t.server.url, 'content-type': FORM },
      body: new URLSearchParams({ _csrf: csrf, agent_id: 'erin', display_name: 'Erin' }).toString(),
      redirect: 'manual',
    });
    expect(created.status).toBe(303);
    const signedOut = await fetch(`${t.server.url}/console/logout`, {
      method: 'POST',
      headers: { cookie, origin: t.server.url, 'content-type': FORM },
      body: new URLSearchParams({ _csrf: csrf }).toString(),
      redirect: 'manual',
    });
    expect(signedOut.status).toBe(303);
    const recorded = (await events()).slice(0, -before || undefined).reverse();
    const consoleEvents = recorded.filter((event) => event.target === 'console' || event.request_id?.startsWith('console-'));
    expect(consoleEvents.map((event) => [event.action, event.outcome, event.actor.kind])).toEqual([
      ['console.signin', 'denied', 'device'],
      ['console.signin', 'success', 'bridge'],
      ['agent.create', 'success', 'bridge'],
      ['console.signout', 'success', 'bridge'],
    ]);
  });

  it('answers a form posted without a session and with a Referer that is not a URL with the sign-in page, not a 500', async () => {
    const response = await fetch(`${t.server.url}/console/agents/create`, {
      method: 'POST',
      headers: { origin: t.server.url, referer: 'x', 'content-type': FORM },
      body: new URLSearchParams({ agent_id: 'x', display_name: 'x' }).toString(),
      redirect: 'manual',
    });
    expect(response.status).toBe(401);
    expect(await response.text()).toMatch(/Your session ended; sign in again\./);
  });

  it('counts wrong keys against the failed-authentication limit (429 past it)', async () => {
    const statuses: number[] = [];
    for (let attempt = 0; attempt < 21; attempt += 1) statuses.push((await signIn(`bk_wrong_${attempt}`)).status);
    expect(statuses.slice(0, 20).every((status) => status === 401)).toBe(true);
    const limited = await signIn(t.server.bridgeKey);
    expect(limited.status).toBe(429);
    expect(await limited.text()).toMatch(/Too many failed sign-ins/);
  });
});
