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

/** The `Set-Cookie` value for a session id, `Secure` when the console is served over HTTPS; `null` clears it. */
export function sessionCookie(id: string | null, options: { secure: boolean; path: string; maxAgeSeconds: number }): string {
  const parts = [
    `${SESSION_COOKIE}=${id ?? ''}`,
    `Path=${options.path}`,
    'HttpOnly',
    'SameSite=Strict',
    `Max-Age=${id ? options.maxAgeSeconds : 0}`,
  ];
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

/**
 * Whether a POST comes from the console's own pages: its `Origin` (or,
 * without one, its `Referer`) must have the request URL's host. Browsers send
 * `Origin` on every cross-site POST, so a missing one with no `Referer` is refused too.
 */
export function sameOrigin(request: Request): boolean {
  const { headers } = request;
  const host = new URL(request.url).host;
  const source = headers.get('origin') ?? headers.get('referer');
  if (!host || !source || source === 'null') return false;
  try {
    return new URL(source).host === host;
  } catch {
    return false;
  }
}
