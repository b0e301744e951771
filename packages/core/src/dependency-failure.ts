import { type AgentInfraError, InsufficientStorageError, ServiceUnavailableError } from './errors.js';

/**
 * What an adapter puts in (or at the head of) an error's cause chain when
 * the dependency certainly did not act on the call: it could not be asked
 * at all (a Redis command never written to the socket). Anything it may
 * have done (a command sent, its answer lost) must not use it.
 * {@link dependencyFailure} answers 503 for these and their subclasses.
 */
export class DependencyUnavailableError extends Error {
  /** What was not available, for the caller's message: `database`, `cache`, `blob store`. */
  readonly dependency: string;
  constructor(message: string, options: { cause: unknown; dependency: string }) {
    super(message, { cause: options.cause });
    this.name = new.target.name;
    this.dependency = options.dependency;
  }
}

/** Seconds a caller is asked to wait (`Retry-After`) after a 503. */
export const UNAVAILABLE_RETRY_AFTER_SECONDS = 2;

/**
 * POSIX errno codes of a connection that was never made, with the call that
 * failed: on an established socket EHOSTUNREACH can also end a connection a
 * statement was sent on, so only `connect` (and name resolution) counts.
 */
const NOT_CONNECTED: Record<string, string> = {
  ECONNREFUSED: 'connect',
  EHOSTUNREACH: 'connect',
  ENETUNREACH: 'connect',
  ENOTFOUND: 'getaddrinfo',
  EAI_AGAIN: 'getaddrinfo',
};
/** POSIX errno codes of a process out of file descriptors: the call that needed one did not start. */
const NO_DESCRIPTORS = new Set(['EMFILE', 'ENFILE']);
/** POSIX errno codes of a full disk or an exhausted disk quota. */
const NO_SPACE = new Set(['ENOSPC', 'EDQUOT']);
/**
 * PostgreSQL SQLSTATEs (Appendix A of its manual) after which the statement
 * did not take effect and may be repeated: could not connect (08001, 08004,
 * 53300 too_many_connections, 57P03 cannot_connect_now), cancelled or
 * rolled back (57014 query_canceled by statement_timeout, 57P01
 * admin_shutdown, 40001 serialization_failure, 40P01 deadlock_detected,
 * 55P03 lock_not_available).
 */
const PG_NOT_DONE = new Set(['08001', '08004', '53300', '57P03', '57014', '57P01', '40001', '40P01', '55P03']);
/** PostgreSQL SQLSTATE 53100 disk_full. */
const PG_DISK_FULL = '53100';
/** S3 error codes asking the caller to slow down or come back: the request was not carried out. */
const S3_NOT_DONE = new Set(['SlowDown', 'ServiceUnavailable']);
/** node-postgres' messages for a connection attempt that timed out (no SQLSTATE, no errno): nothing was sent. */
const PG_CONNECT_TIMEOUT = /Connection terminated due to connection timeout|timeout exceeded when trying to connect/;

type Verdict = { kind: 'unavailable'; dependency: string } | { kind: 'no_space'; dependency: string };

/** The verdict for one error object of a cause chain, or `null` when it says nothing about availability. */
function judge(error: object): Verdict | null {
  if (error instanceof DependencyUnavailableError) return { kind: 'unavailable', dependency: error.dependency };
  const { name, code, syscall, message } = error as { name?: unknown; code?: unknown; syscall?: unknown; message?: unknown };
  // knex's pool found no free connection in time (acquireConnectionTimeout): no statement was sent. (Its query
  // `.timeout()` throws the same class after the statement was sent, hence the message.)
  if (name === 'KnexTimeoutError' && typeof message === 'string' && message.includes('Timeout acquiring a connection')) {
    return { kind: 'unavailable', dependency: 'database' };
  }
  if (typeof code === 'string') {
    if (NO_SPACE.has(code)) return { kind: 'no_space', dependency: 'disk' };
    if (code === 'SQLITE_FULL' || code === PG_DISK_FULL) return { kind: 'no_space', dependency: 'database' };
    // SQLITE_BUSY* / SQLITE_LOCKED*: another connection held the lock past busy_timeout; the statement did not run.
    if (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED')) return { kind: 'unavailable', dependency: 'database' };
    if (PG_NOT_DONE.has(code)) return { kind: 'unavailable', dependency: 'database' };
    if (S3_NOT_DONE.has(code)) return { kind: 'unavailable', dependency: 'blob store' };
    if (NO_DESCRIPTORS.has(code)) return { kind: 'unavailable', dependency: 'a dependency' };
    if (NOT_CONNECTED[code] !== undefined && NOT_CONNECTED[code] === syscall) return { kind: 'unavailable', dependency: 'a dependency' };
  }
  if (typeof message === 'string' && PG_CONNECT_TIMEOUT.test(message)) return { kind: 'unavailable', dependency: 'database' };
  return null;
}

/**
 * Whether `error` (or an error in its `cause` chain, or one of an
 * `AggregateError`'s errors, up to 8 levels deep) is a dependency failure
 * that left the request without effect, as the CONTRACT.md error to answer:
 * - {@link InsufficientStorageError} (507) for a full disk (ENOSPC, EDQUOT),
 *   SQLite's SQLITE_FULL and PostgreSQL's disk_full (53100);
 * - {@link ServiceUnavailableError} (503, `Retry-After`
 *   {@link UNAVAILABLE_RETRY_AFTER_SECONDS}) for a connection never made
 *   (`connect` refused or unreachable, the name not resolved, the attempt
 *   timed out, no free pool connection, no file descriptor), a database that was busy, cancelled or rolled the
 *   statement back (SQLITE_BUSY, the SQLSTATEs in `PG_NOT_DONE`), S3
 *   throttling, and any {@link DependencyUnavailableError}.
 *
 * Returns `null` for everything else, including failures that may have
 * taken effect (a connection reset while a statement ran): those stay 500.
 * The returned message names the kind of dependency, never a host, a query
 * or a credential.
 */
export function dependencyFailure(error: unknown): AgentInfraError | null {
  const queue: Array<{ error: unknown; depth: number }> = [{ error, depth: 0 }];
  while (queue.length > 0) {
    const next = queue.shift() as { error: unknown; depth: number };
    if (typeof next.error !== 'object' || next.error === null || next.depth > 8) continue;
    const verdict = judge(next.error);
    if (verdict?.kind === 'no_space') {
      return new InsufficientStorageError(
        verdict.dependency === 'disk'
          ? 'The server is out of disk space; nothing was stored. Try again once an operator has freed space.'
          : 'The database is full; nothing was stored. Try again once an operator has freed space.',
      );
    }
    if (verdict) {
      return new ServiceUnavailableError(
        `The ${verdict.dependency === 'a dependency' ? 'service' : verdict.dependency} this request needs is unavailable right now, so nothing was done; try again in ${UNAVAILABLE_RETRY_AFTER_SECONDS} s.`,
        UNAVAILABLE_RETRY_AFTER_SECONDS,
      );
    }
    const { cause, errors } = next.error as { cause?: unknown; errors?: unknown };
    if (cause !== undefined) queue.push({ error: cause, depth: next.depth + 1 });
    if (Array.isArray(errors)) for (const inner of errors.slice(0, 8)) queue.push({ error: inner, depth: next.depth + 1 });
  }
  return null;
}

/**
 * A short reason for a dependency check that failed, fit for an
 * unauthenticated answer (`GET /ready`): the first errno or SQLSTATE `code`
 * in the cause chain (`ECONNREFUSED`, `57P03`), else the first line of the
 * message with URLs and host names or addresses (with or without a port)
 * replaced by `<address>`.
 */
export function publicReason(error: unknown): string {
  for (let current = error, depth = 0; typeof current === 'object' && current !== null && depth <= 8; depth += 1) {
    const { code, cause } = current as { code?: unknown; cause?: unknown };
    if (typeof code === 'string' && code.length > 0) return code;
    current = cause;
  }
  const line = (error instanceof Error ? error.message : String(error)).split('\n')[0] ?? '';
  return line
    .replace(/[a-z][a-z0-9+.-]*:\/\/\S+/gi, '<address>')
    .replace(/\[[0-9a-f:]+\](:\d+)?|\b[\w-]+(\.[\w-]+)+(:\d+)?|\b[\w-]+:\d{2,5}\b|\b[0-9a-f]{0,4}(:[0-9a-f]{0,4}){2,7}\b/gi, '<address>');
}
