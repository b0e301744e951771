import type { Principal } from '../auth/principal.js';

/**
 * Whether `principal` sees stored delivery targets (webhook and callback
 * URLs) whole: the bridge key, a device key, or a delegation holding
 * `permission`, the one that lets it change those targets. A delegation
 * that may only read them does not see their query strings, which often
 * carry a token for the receiver (see {@link targetWithoutQuery}).
 */
export function seesWholeTargets(principal: Principal | null, permission: string): boolean {
  if (principal === null) return false;
  return principal.kind !== 'delegation' || principal.permissions.includes(permission);
}

/**
 * `url` without its query string and fragment: origin and path
 * (`https://hooks.example.com/run?token=abc` → `https://hooks.example.com/run`).
 * Stored targets never carry user info (refused when they are set).
 */
export function targetWithoutQuery(url: string): string {
  const parsed = new URL(url);
  return `${parsed.origin}${parsed.pathname}`;
}
