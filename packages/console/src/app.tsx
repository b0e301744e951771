import { type Kernel, RateLimitError } from '@agentinfra/core';
import { Hono } from 'hono';
import { ConsoleApiError, createConsoleApi } from './api.js';
import type { ConsoleApp, ConsoleEnv, PageDeps } from './context.js';
import { redirectWith } from './context.js';
import { SignInPage } from './layout.js';
import { registerPages } from './pages/index.js';
import { readSessionCookie, SECURITY_HEADERS, sameOrigin, sessionCookie } from './security-headers.js';
import type { SessionStore } from './sessions.js';
import { staticAsset } from './static-assets.js';

/** Options of {@link createConsoleApp}. */
export interface ConsoleAppOptions {
  kernel: Kernel;
  base: string;
  sessions: SessionStore;
  idleMs: number;
}

/**
 * The console's routes under `base`: static assets, sign in and out, and
 * every page. Every response gets the strict CSP; every page needs a live
 * session; every POST but sign-in must carry the session's CSRF token and
 * come from the console's own origin.
 */
export function createConsoleApp(options: ConsoleAppOptions): ConsoleApp {
  const { kernel, base, sessions } = options;
  const app = new Hono<ConsoleEnv>({ strict: false }).basePath(base);
  const secure = (url: string) => new URL(url).protocol === 'https:';
  const cookie = (id: string | null, url: string) =>
    sessionCookie(id, { secure: secure(url), path: base, maxAgeSeconds: Math.ceil(options.idleMs / 1000) });

  app.use('*', async (c, next) => {
    await next();
    for (const [name, value] of Object.entries(SECURITY_HEADERS)) c.res.headers.set(name, value);
    if (!c.res.headers.has('cache-control')) c.res.headers.set('cache-control', 'no-store');
  });

  app.get('/static/:name', (c) => staticAsset(c.req.param('name')) ?? c.notFound());

  app.get('/login', (c) =>
    sessions.get(readSessionCookie(c.req.header('cookie'))) ? c.redirect(`${base}/`, 303) : c.html(<SignInPage base={base} />),
  );

  app.post('/login', async (c) => {
    if (!sameOrigin(c.req.raw)) return c.html(<SignInPage base={base} error="Refused: the form did not come from this console." />, 403);
    const form = await c.req.parseBody();
    const key = typeof form.key === 'string' ? form.key : '';
    try {
      const principal = await kernel.authenticate(key === '' ? null : key, { client: c.env?.client ?? 'console' });
      if (principal?.kind !== 'bridge') {
        return c.html(<SignInPage base={base} error="That is not the bridge key. Check the key and try again." />, 401);
      }
    } catch (error) {
      if (error instanceof RateLimitError) {
        c.header('retry-after', String(error.retryAfterSeconds));
        return c.html(
          <SignInPage base={base} error={`Too many failed sign-ins from this address: try again in ${error.retryAfterSeconds} s.`} />,
          429,
        );
      }
      throw error;
    }
    const session = sessions.create();
    c.header('set-cookie', cookie(session.id, c.req.url));
    return c.redirect(`${base}/`, 303);
  });

  app.use('*', async (c, next) => {
    const session = sessions.get(readSessionCookie(c.req.header('cookie')));
    if (!session) {
      if (c.req.method === 'GET' || c.req.method === 'HEAD') return c.redirect(`${base}/login`, 303);
      return c.html(<SignInPage base={base} error="Your session has ended: sign in again." />, 401);
    }
    c.set('session', session);
    if (c.req.method === 'POST') {
      const form = await c.req.parseBody();
      if (!sameOrigin(c.req.raw) || form._csrf !== session.csrf) {
        return c.text('Refused: the form did not come from this console session (CSRF check).', 403);
      }
    }
    await next();
  });

  app.post('/logout', (c) => {
    sessions.delete(c.get('session').id);
    c.header('set-cookie', cookie(null, c.req.url));
    return c.redirect(`${base}/login`, 303);
  });

  const deps: PageDeps = { api: createConsoleApi(kernel), kernel, base };
  registerPages(app, deps);

  app.onError((error, c) => {
    if (error instanceof ConsoleApiError && c.req.method === 'POST' && c.var.session) {
      const back = c.req.header('referer');
      return redirectWith(c, back && sameOrigin(c.req.raw) ? new URL(back).pathname + new URL(back).search : `${base}/`, {
        kind: 'error',
        text: `${error.code}: ${error.message}`,
      });
    }
    if (error instanceof ConsoleApiError) return c.text(`${error.code}: ${error.message}`, error.status as 400);
    kernel.logger.error({ err: error, path: c.req.path }, 'console error');
    return c.text('Internal error in the console; the server log has the details.', 500);
  });
  return app;
}
