import { z } from 'zod';

/** A Redis URL, `redis[s]://[[user][:password]@]host[:port][/db-number]` (IANA `redis` and `rediss` schemes). */
export const redisUrlSchema = z.string().refine(
  (value) => {
    try {
      const { protocol, hostname, pathname } = new URL(value);
      return (protocol === 'redis:' || protocol === 'rediss:') && hostname !== '' && /^(\/\d*)?$/.test(pathname);
    } catch {
      return false;
    }
  },
  { message: 'expected redis[s]://[[user][:password]@]host[:port][/db-number]' },
);

/**
 * `url` with its password replaced by `***`, safe for logs and error messages,
 * e.g. `redis://app:***@cache:6379/0`. Input that does not parse as a URL
 * yields `(unparseable Redis URL)` so nothing of it leaks.
 */
export function redactRedisUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password !== '') parsed.password = '***';
    return parsed.toString();
  } catch {
    return '(unparseable Redis URL)';
  }
}
