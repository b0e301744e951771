/**
 * The Content-Security-Policy of every console response: own scripts and
 * styles only, no framing, forms only to itself. Images may also be `data:`
 * URLs, for the inline icon in the page head (an image cannot run script;
 * the console never renders HTML it did not write).
 */
export const CONSOLE_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'";

/** Headers every console response carries. */
export const SECURITY_HEADERS: Record<string, string> = {
  'content-security-policy': CONSOLE_CSP,
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'same-origin',
  'cross-origin-opener-policy': 'same-origin',
};

/** Name of the session cookie (Path=/console). */
export const SESSION_COOKIE = 'agentinfra_console';

/**
 * The `Set-Cookie` value for a session id, `Secure` when the console is
 * served over HTTPS (see {@link servedOverHttps}); `null` clears it. The
 * cookie has no `Max-Age`: it lasts until the browser closes, and the
 * server alone ends the session after its idle time (a fixed lifetime in
 * the browser would sign an active operator out that long after signing in).
 */
export function sessionCookie(id: string | null, options: { secure: boolean; path: string }): string {
  const parts = [`${SESSION_COOKIE}=${id ?? ''}`, `Path=${options.path}`, 'HttpOnly', 'SameSite=Strict'];
  if (!id) parts.push('Max-Age=0');
  if (options.secure) parts.push('Secure');
  return parts.join('; ');
}

/** The session id from a `Cookie` header. */
export function readSessionCookie(header: string | undefined | null): string | undefined {
  for (const part of (header ?? '').split(';')) {
    const [name, ...value] = part.trim().split('=');
    if (name === SESSION_COOKIE) return value.join('=') || undefined;
  }
  return undefined;
}

/** What tells the console that a request reached it over HTTPS (the core config's `publicUrl` and `http.trustProxyHops`). */
export interface ConsoleTransport {
  /** The server's public base URL, when configured. */
  publicUrl?: string | undefined;
  /** Reverse proxies trusted to say how the request arrived (`X-Forwarded-Proto`); 0 trusts none. */
  trustProxyHops: number;
}

/**
 * The scheme a trusted proxy reports in `X-Forwarded-Proto`, read like
 * `X-Forwarded-For`: each of the `hops` proxies may append the scheme it
 * received, so the entry that many places from the right is the client's
 * (entries further left are the client's own claims); the leftmost when
 * there are fewer. `undefined` without the header or without trusted hops.
 */
function forwardedProto(header: string | null, hops: number): string | undefined {
  if (hops <= 0 || !header) return undefined;
  const entries = header
    .split(',')
    .map((entry) => entry.trim().toLowerCase())
    .filter(Boolean);
  return entries[Math.max(0, entries.length - hops)];
}

/**
 * Whether the browser reached the console over HTTPS: the request URL is
 * `https:`; or a trusted proxy (`trustProxyHops` > 0) says so in
 * `X-Forwarded-Proto` (which, when present, decides); or, without that
 * header, the configured `publicUrl` is `https:` and names the host the
 * browser asked for (a tunnel to `http://127.0.0.1:8787` stays plain HTTP).
 * `X-Forwarded-Proto` is ignored when no proxy is trusted: anyone can send it.
 */
export function servedOverHttps(request: Request, transport: ConsoleTransport): boolean {
  const url = new URL(request.url);
  if (url.protocol === 'https:') return true;
  const proto = forwardedProto(request.headers.get('x-forwarded-proto'), transport.trustProxyHops);
  if (proto !== undefined) return proto === 'https';
  if (!transport.publicUrl || !URL.canParse(transport.publicUrl)) return false;
  const publicUrl = new URL(transport.publicUrl);
  return publicUrl.protocol === 'https:' && publicUrl.hostname === url.hostname;
}

/**
 * Whether a POST comes from the console's own pages: its `Origin` (or,
 * without one, its `Referer`) must have the request URL's host, and when the
 * console is served over HTTPS (`https`) the `https:` scheme too, so that a
 * plain-HTTP page on the same host cannot post. Otherwise `https:` and
 * `http:` are both taken: behind a proxy the console is not told about, an
 * HTTPS page reaches it as plain HTTP. Browsers send `Origin` on every
 * cross-site POST, so a missing one with no `Referer` is refused too.
 */
export function sameOrigin(request: Request, https: boolean): boolean {
  const { headers } = request;
  const host = new URL(request.url).host;
  const source = headers.get('origin') ?? headers.get('referer');
  if (!host || !source || source === 'null' || !URL.canParse(source)) return false;
  const url = new URL(source);
  const schemes = https ? ['https:'] : ['https:', 'http:'];
  return url.host === host && schemes.includes(url.protocol);
}
