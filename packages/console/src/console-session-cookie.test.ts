import { request as httpRequest } from 'node:http';
import type { CoreConfigInput } from '@agentinfra/core';
import { startTestKernel, type TestKernel } from '@agentinfra/core/testing';
import { identityModule } from '@agentinfra/module-identity';
import { sqlDatabases } from '@agentinfra/testkit';
import { afterAll, describe, expect, it } from 'vitest';
import { createConsoleApp } from './app.js';
import { createSessionStore } from './sessions.js';
import { consoleSurface } from './surface.js';

const FORM = 'application/x-www-form-urlencoded';
const MINUTE = 60_000;

/**
 * The session cookie: no fixed lifetime in the browser (the server ends a
 * session after 30 minutes without a request, however long ago it began),
 * and `Secure` whenever the browser reached the console over HTTPS, also
 * through a TLS-terminating proxy the config declares.
 */
describe.each(sqlDatabases())('console session cookie on $name', ({ create }) => {
  const stops: Array<() => Promise<void>> = [];

  /** A kernel with the identity module and the console, on a fresh database, with `config`. */
  const start = async (config: Partial<CoreConfigInput> = {}): Promise<TestKernel> => {
    const fixture = await create();
    const server = await startTestKernel({
      modules: [identityModule],
      adapters: { sql: fixture.db },
      config,
      surfaces: [consoleSurface()],
    });
    stops.push(async () => {
      await server.stop();
      await fixture.cleanup();
    });
    return server;
  };

  afterAll(async () => {
    for (const stop of stops.reverse()) await stop();
  });

  /** Signs in with the bridge key, sending `headers` (an `origin` of the server's own URL unless given). */
  const signIn = (server: TestKernel, headers: Record<string, string> = {}) =>
    fetch(`${server.url}/console/login`, {
      method: 'POST',
      headers: { origin: server.url, 'content-type': FORM, ...headers },
      body: new URLSearchParams({ key: server.bridgeKey }).toString(),
      redirect: 'manual',
    });

  /** The attributes of a `Set-Cookie` value, lower-cased names (`httponly`, `max-age`, …). */
  const attributes = (setCookie: string | null) =>
    Object.fromEntries(
      (setCookie ?? '')
        .split(';')
        .slice(1)
        .map((part) => part.trim().split('='))
        .map(([name, value]) => [(name as string).toLowerCase(), value ?? true]),
    );

  it('has no fixed lifetime: an active operator stays signed in past 30 minutes, an idle one is signed out by the server', async () => {
    const server = await start();
    let now = 0;
    // The console app of the surface, on the same kernel, with a session store on a clock the test moves.
    const app = createConsoleApp({
      kernel: server.kernel,
      base: '/console',
      sessions: createSessionStore({ idleMs: 30 * MINUTE, now: () => now }),
    });
    const origin = 'http://console.test';
    const signedIn = await app.request(
      `${origin}/console/login`,
      { method: 'POST', headers: { origin, 'content-type': FORM }, body: new URLSearchParams({ key: server.bridgeKey }).toString() },
      { client: '127.0.0.1' },
    );
    expect(signedIn.status).toBe(303);
    const setCookie = signedIn.headers.get('set-cookie');
    expect(setCookie).toMatch(/^agentinfra_console=[\w-]+; Path=\/console; HttpOnly; SameSite=Strict$/);
    // No Max-Age or Expires: the browser keeps the cookie while the server keeps the session.
    expect(attributes(setCookie)).not.toHaveProperty('max-age');
    expect(attributes(setCookie)).not.toHaveProperty('expires');
    const cookie = (setCookie as string).split(';')[0] as string;
    const view = (path = '/console/agents') => app.request(`${origin}${path}`, { headers: { cookie } }, { client: '127.0.0.1' });
    for (const minutes of [20, 40, 60, 85]) {
      now = minutes * MINUTE;
      const response = await view();
      expect(response.status, `${minutes} min after sign-in`).toBe(200);
      // Authenticated answers do not reset the cookie to a lifetime either.
      expect(response.headers.get('set-cookie')).toBeNull();
    }
    now = 85 * MINUTE + 30 * MINUTE + 1;
    const ended = await view();
    expect(ended.status).toBe(303);
    expect(ended.headers.get('location')).toBe('/console/login?next=%2Fconsole%2Fagents&session=ended');
  });

  it('is Secure when a trusted proxy says the browser came over HTTPS, and the form must come from the https: origin', async () => {
    const server = await start({ http: { trustProxyHops: 1 } });
    const host = new URL(server.url).host;
    const forwarded = await signIn(server, { 'x-forwarded-proto': 'https', origin: `https://${host}` });
    expect(forwarded.status).toBe(303);
    expect(attributes(forwarded.headers.get('set-cookie'))).toHaveProperty('secure', true);
    // Served over HTTPS, a plain-HTTP page on the same host may not post to the console.
    expect((await signIn(server, { 'x-forwarded-proto': 'https' })).status).toBe(403);
    // Without the header, or with the client's claim of https before the proxy's own http, it is plain HTTP.
    const plain = await signIn(server);
    expect(plain.status).toBe(303);
    expect(attributes(plain.headers.get('set-cookie'))).not.toHaveProperty('secure');
    const claimed = await signIn(server, { 'x-forwarded-proto': 'https, http' });
    expect(claimed.status).toBe(303);
    expect(attributes(claimed.headers.get('set-cookie'))).not.toHaveProperty('secure');
    // A form posted within the HTTPS session is checked against the https: origin too.
    const cookie = (forwarded.headers.get('set-cookie') as string).split(';')[0] as string;
    const html = await (await fetch(`${server.url}/console/agents`, { headers: { cookie, 'x-forwarded-proto': 'https' } })).text();
    const csrf = /name="_csrf" value="([^"]+)"/.exec(html)?.[1] as string;
    const create = (origin: string) =>
      fetch(`${server.url}/console/agents/create`, {
        method: 'POST',
        headers: { cookie, origin, 'x-forwarded-proto': 'https', 'content-type': FORM },
        body: new URLSearchParams({ _csrf: csrf, agent_id: 'dave', display_name: 'Dave' }).toString(),
        redirect: 'manual',
      });
    expect((await create(`http://${host}`)).status).toBe(403);
    expect((await create(`https://${host}`)).status).toBe(303);
  });

  it('ignores X-Forwarded-Proto when no proxy is trusted', async () => {
    const server = await start();
    const host = new URL(server.url).host;
    const response = await signIn(server, { 'x-forwarded-proto': 'https' });
    expect(response.status).toBe(303);
    expect(attributes(response.headers.get('set-cookie'))).not.toHaveProperty('secure');
    // Behind a proxy the console is not told about, the browser's https: origin is still the console's own.
    expect((await signIn(server, { origin: `https://${host}` })).status).toBe(303);
    expect((await signIn(server, { origin: 'https://evil.example' })).status).toBe(403);
  });

  it('is Secure when the configured public URL is https: on its host, not through a tunnel to the plain port', async () => {
    const server = await start({ publicUrl: 'https://console.example' });
    const { port } = new URL(server.url);
    /** Signs in as a browser at `https://console.example` would through a proxy that keeps the `Host` (no forwarding headers). */
    const atPublicUrl = (origin: string) =>
      new Promise<{ status: number; setCookie: string | null }>((resolve, reject) => {
        const body = new URLSearchParams({ key: server.bridgeKey }).toString();
        const request = httpRequest(
          {
            host: '127.0.0.1',
            port,
            method: 'POST',
            path: '/console/login',
            headers: { host: 'console.example', origin, 'content-type': FORM },
          },
          (response) => {
            response.resume();
            response.on('end', () => resolve({ status: response.statusCode ?? 0, setCookie: response.headers['set-cookie']?.[0] ?? null }));
          },
        );
        request.on('error', reject);
        request.end(body);
      });
    const secure = await atPublicUrl('https://console.example');
    expect(secure.status).toBe(303);
    expect(attributes(secure.setCookie)).toHaveProperty('secure', true);
    expect((await atPublicUrl('http://console.example')).status).toBe(403);
    // The same server reached at 127.0.0.1 (an SSH tunnel to the plain port) is plain HTTP.
    const tunnel = await signIn(server);
    expect(tunnel.status).toBe(303);
    expect(attributes(tunnel.headers.get('set-cookie'))).not.toHaveProperty('secure');
  });
});
