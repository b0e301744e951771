import { type Kernel, type Principal, RateLimitError, safeEqual } from '@agentinfra/core';
import { Hono } from 'hono';
import { asOperator, ConsoleApiError, createConsoleApi } from './api.js';
import type { ConsoleApp, ConsoleEnv, PageDeps } from './context.js';
import { frameOf, redirectWith } from './context.js';
import { ErrorPage, SignInPage } from './layout.js';
import { registerPages } from './pages/index.js';
import {
  type ConsoleTransport,
  readSessionCookie,
  SECURITY_HEADERS,
  sameOrigin,
  servedOverHttps,
  sessionCookie,
} from './security-headers.js';
import type { SessionStore } from './sessions.js';
import { staticAsset } from './static-assets.js';

/**
 * The console page to return to after signing in, when `value` is one:
 * a path (with query) under `base` on this origin, never another origin
 * (`//evil.example`, `https://…`, backslashes), never outside `base` after
 * `..` is resolved, never the sign-in or sign-out route. Anything else gives
 * `undefined` (the overview).
 */
/**
 * Records a console sign-in or sign-out in the audit log (page views are
 * not recorded; actions are, as the API's bridge key uses). A failure to
 * record is logged, not shown: the operator's request stands.
 */
async function recordSession(
  kernel: Kernel,
  action: 'console.signin' | 'console.signout',
  outcome: 'success' | 'denied',
  actor: Principal | null,
  client: string,
): Promise<void> {
  await kernel.audit
    .record({ action, outcome, actor: actor ?? { kind: 'anonymous', id: null, agent_id: null }, target: 'console', client })
    .catch((error: unknown) => kernel.logger.error({ err: error }, 'audit: could not record the event'));
}

export function safeReturnPath(base: string, value: unknown): string | undefined {
  if (typeof value !== 'string' || value.length > 2048 || !value.startsWith('/') || value.startsWith('//')) return undefined;
  if (/[\\\p{Cc}]/u.test(value)) return undefined;
  const origin = 'http://console.invalid';
  let url: URL;
  try {
    url = new URL(value, origin);
  } catch {
    return undefined;
  }
  if (url.origin !== origin) return undefined;
  if (url.pathname !== base && !url.pathname.startsWith(`${base}/`)) return undefined;
  if (url.pathname === `${base}/login` || url.pathname === `${base}/logout`) return undefined;
  return `${url.pathname}${url.search}`;
}

/**
 * The console page a same-origin form was posted from ({@link safeReturnPath}
 * of its `Referer`), or `undefined` when the header is missing, not a URL or
 * the request is not same-origin.
 */
function refererReturnPath(base: string, request: Request, https: boolean): string | undefined {
  const referer = request.headers.get('referer');
  if (!referer || !sameOrigin(request, https) || !URL.canParse(referer)) return undefined;
  const url = new URL(referer);
  return safeReturnPath(base, url.pathname + url.search);
}

/** Options of {@link createConsoleApp}. */
export interface ConsoleAppOptions {
  kernel: Kernel;
  base: string;
  sessions: SessionStore;
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
  // HTTPS behind a TLS-terminating proxy is known from the core config only: `publicUrl`, and the proxies trusted for `X-Forwarded-*`.
  const transport: ConsoleTransport = { publicUrl: kernel.config.publicUrl, trustProxyHops: kernel.config.http.trustProxyHops };
  const https = (request: Request) => servedOverHttps(request, transport);
  const cookie = (id: string | null, request: Request) => sessionCookie(id, { secure: https(request), path: base });

  app.use('*', (c, next) => asOperator(c.env?.client ?? 'console', next));

  app.use('*', async (c, next) => {
    await next();
    for (const [name, value] of Object.entries(SECURITY_HEADERS)) c.res.headers.set(name, value);
    if (!c.res.headers.has('cache-control')) c.res.headers.set('cache-control', 'no-store');
  });

  app.get('/static/:name', (c) => staticAsset(c.req.param('name')) ?? c.notFound());

  app.get('/login', (c) => {
    const next = safeReturnPath(base, c.req.query('next'));
    if (sessions.get(readSessionCookie(c.req.header('cookie')))) return c.redirect(next ?? `${base}/`, 303);
    return c.html(<SignInPage base={base} next={next} notice={c.req.query('session') === 'ended' ? 'expired' : undefined} />);
  });

  app.post('/login', async (c) => {
    if (!sameOrigin(c.req.raw, https(c.req.raw)))
      return c.html(<SignInPage base={base} error="Refused: the form did not come from this console." />, 403);
    const form = await c.req.parseBody();
    const key = typeof form.key === 'string' ? form.key : '';
    const next = safeReturnPath(base, form.next);
    const client = c.env?.client ?? 'console';
    try {
      const principal = await kernel.authenticate(key === '' ? null : key, { client });
      if (principal?.kind !== 'bridge') {
        await recordSession(kernel, 'console.signin', 'denied', principal, client);
        return c.html(<SignInPage base={base} next={next} error="That is not the bridge key. Check the key and try again." />, 401);
      }
      await recordSession(kernel, 'console.signin', 'success', principal, client);
    } catch (error) {
      if (error instanceof RateLimitError) {
        c.header('retry-after', String(error.retryAfterSeconds));
        return c.html(
          <SignInPage
            base={base}
            next={next}
            error={`Too many failed sign-ins from this address: try again in ${error.retryAfterSeconds} s.`}
          />,
          429,
        );
      }
      throw error;
    }
    const session = sessions.create();
    c.header('set-cookie', cookie(session.id, c.req.raw));
    return c.redirect(next ?? `${base}/`, 303);
  });

  app.use('*', async (c, next) => {
    const presented = readSessionCookie(c.req.header('cookie'));
    const session = sessions.get(presented);
    if (!session) {
      if (c.req.method === 'GET' || c.req.method === 'HEAD') {
        const url = new URL(c.req.url);
        const query = new URLSearchParams();
        const back = safeReturnPath(base, `${url.pathname}${url.search}`);
        if (back && back !== base && back !== `${base}/`) query.set('next', back);
        if (presented) query.set('session', 'ended');
        return c.redirect(`${base}/login${query.size ? `?${query.toString()}` : ''}`, 303);
      }
      const back = refererReturnPath(base, c.req.raw, https(c.req.raw));
      return c.html(<SignInPage base={base} next={back} error="Your session ended; sign in again." />, 401);
    }
    c.set('session', session);
    if (c.req.method === 'POST') {
      const form = await c.req.parseBody();
      if (!sameOrigin(c.req.raw, https(c.req.raw)) || typeof form._csrf !== 'string' || !safeEqual(form._csrf, session.csrf)) {
        return c.html(
          <ErrorPage
            frame={frameOf(c, base)}
            status={403}
            message="Refused: the form did not come from this console session (CSRF check). Reload the page and try again."
          />,
          403,
        );
      }
    }
    await next();
  });

  app.post('/logout', async (c) => {
    sessions.delete(c.get('session').id);
    await recordSession(kernel, 'console.signout', 'success', { kind: 'bridge' }, c.env?.client ?? 'console');
    c.header('set-cookie', cookie(null, c.req.raw));
    return c.redirect(`${base}/login`, 303);
  });

  const deps: PageDeps = { api: createConsoleApi(kernel), kernel, base };
  registerPages(app, deps);

  app.notFound((c) =>
    c.var.session
      ? c.html(<ErrorPage frame={frameOf(c, base)} status={404} message="There is no such console page." />, 404)
      : c.text('Not found.', 404),
  );

  app.onError((error, c) => {
    const session = c.var.session;
    if (error instanceof ConsoleApiError && c.req.method === 'POST' && session) {
      const back = refererReturnPath(base, c.req.raw, https(c.req.raw));
      return redirectWith(c, back ?? `${base}/`, { kind: 'error', text: error.message });
    }
    if (!(error instanceof ConsoleApiError)) kernel.logger.error({ err: error, path: c.req.path }, 'console error');
    const status = error instanceof ConsoleApiError && error.status >= 400 && error.status <= 599 ? error.status : 500;
    const message = error instanceof ConsoleApiError ? error.message : 'Internal error in the console; the server log has the details.';
    if (session) return c.html(<ErrorPage frame={frameOf(c, base)} status={status} message={message} />, status as 500);
    return c.text(message, status as 500);
  });
  return app;
}
