import pg from 'pg';
import { createClient } from 'redis';

/**
 * Milliseconds a probe waits for the connection (and for its one command). A
 * server that is down refuses at once; this only bounds a slow one, and on
 * the 2-core CI machine, with three test workers opening connections at once,
 * a running PostgreSQL once took more than 1 s to answer the probe.
 */
export const PROBE_TIMEOUT_MS = 5_000;

/** What a probe found: nothing (reachable) or the reason it could not connect, e.g. `ECONNREFUSED`. */
export type ProbeResult = { reachable: true } | { reachable: false; reason: string };

/**
 * Connects to PostgreSQL at `url` and runs `select 1`, within about
 * {@link PROBE_TIMEOUT_MS} for the connection and as much for the query.
 * Never throws; the connection is always closed.
 */
export async function probePostgres(url: string): Promise<ProbeResult> {
  const client = new pg.Client({
    connectionString: url,
    connectionTimeoutMillis: PROBE_TIMEOUT_MS,
    query_timeout: PROBE_TIMEOUT_MS,
  });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.query('select 1');
    return { reachable: true };
  } catch (error) {
    return { reachable: false, reason: probeFailureReason(error) };
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * Whether the PostgreSQL server at `url` can create pgvector's `vector`
 * extension: it is listed in `pg_available_extensions` (installed on the
 * server, whether or not this database has run `create extension`). Same
 * timeouts as {@link probePostgres}; never throws.
 */
export async function probePgvector(url: string): Promise<ProbeResult> {
  const client = new pg.Client({
    connectionString: url,
    connectionTimeoutMillis: PROBE_TIMEOUT_MS,
    query_timeout: PROBE_TIMEOUT_MS,
  });
  client.on('error', () => undefined);
  try {
    await client.connect();
    const { rows } = await client.query(`select default_version from pg_available_extensions where name = 'vector'`);
    if (rows.length > 0) return { reachable: true };
    return { reachable: false, reason: 'the server has no vector extension in pg_available_extensions' };
  } catch (error) {
    return { reachable: false, reason: probeFailureReason(error) };
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * Connects to Redis at `url` (RESP, with the URL's credentials and database)
 * and sends `PING`, connecting within {@link PROBE_TIMEOUT_MS} and without
 * reconnect attempts. Never throws; the connection is always closed.
 */
export async function probeRedis(url: string): Promise<ProbeResult> {
  let client: ReturnType<typeof createClient> | undefined;
  try {
    client = createClient({ url, socket: { connectTimeout: PROBE_TIMEOUT_MS, reconnectStrategy: false } });
    client.on('error', () => undefined);
    await client.connect();
    await withTimeout(client.ping(), PROBE_TIMEOUT_MS);
    return { reachable: true };
  } catch (error) {
    return { reachable: false, reason: probeFailureReason(error) };
  } finally {
    if (client?.isOpen) client.destroy();
  }
}

/** Rejects with a timeout error when `promise` has not settled after `ms` milliseconds. */
async function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Short reason of a connection failure: a Node error code (`ECONNREFUSED`), else the driver's message. */
function probeFailureReason(error: unknown): string {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  if (typeof code === 'string' && /^E[A-Z_]+$/.test(code)) return code;
  if (typeof message === 'string' && message !== '') return message;
  return typeof code === 'string' ? code : String(error);
}
