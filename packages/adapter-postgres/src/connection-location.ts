/**
 * `host:port/database` of a PostgreSQL connection URL, for logs and
 * {@link SqlDatabase.describe}. Never contains the user name or password.
 * Follows libpq's URI form (`postgres[ql]://[user[:password]@][host][:port][/dbname][?host=…]`):
 * a `host` query parameter (e.g. a Unix socket folder) wins over the authority,
 * the port defaults to 5432 and the database to the user name.
 * @example connectionLocation('postgres://app:s3cret@db.internal:6432/agents') === 'db.internal:6432/agents'
 */
export function connectionLocation(url: string): string {
  const parsed = new URL(url);
  const host = parsed.searchParams.get('host') ?? (decodeURIComponent(parsed.hostname) || 'localhost');
  const port = parsed.searchParams.get('port') ?? (parsed.port || '5432');
  const database =
    parsed.searchParams.get('dbname') ??
    (decodeURIComponent(parsed.pathname.replace(/^\//, '')) || decodeURIComponent(parsed.username) || 'postgres');
  return `${host}:${port}/${database}`;
}
