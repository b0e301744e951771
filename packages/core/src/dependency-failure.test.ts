import { writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { KnexTimeoutError } from 'knex';
import { describe, expect, it } from 'vitest';
import { DependencyUnavailableError, dependencyFailure, publicReason } from './dependency-failure.js';
import { InsufficientStorageError, ServiceUnavailableError } from './errors.js';

/** The error a TCP connection to a closed local port fails with (ECONNREFUSED). */
async function refusedConnection(): Promise<Error> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port: 1 });
    socket.once('error', resolve);
  });
}

describe('dependencyFailure', () => {
  it('answers 507 for a full disk (a real ENOSPC from /dev/full), however deep in the cause chain', async () => {
    const full = await writeFile('/dev/full', 'bytes').then(
      () => null,
      (error: unknown) => error,
    );
    expect(full).toMatchObject({ code: 'ENOSPC' });
    const wrapped = new Error('fs blob store: put failed (ENOSPC)', { cause: new Error('outer', { cause: full }) });
    const answer = dependencyFailure(wrapped);
    expect(answer).toBeInstanceOf(InsufficientStorageError);
    expect(answer).toMatchObject({ status: 507, code: 'insufficient_storage' });
    expect(answer?.message).not.toContain('/dev/full');
    expect(dependencyFailure({ code: 'SQLITE_FULL', message: 'database or disk is full' })).toBeInstanceOf(InsufficientStorageError);
    expect(dependencyFailure({ code: '53100', message: 'could not extend file' })).toBeInstanceOf(InsufficientStorageError);
  });

  it('answers 503 with a Retry-After for a refused connection, an empty pool, a busy or cancelling database and a down Redis', async () => {
    const refused = await refusedConnection();
    const cases: unknown[] = [
      refused,
      new AggregateError([new Error('ipv6'), refused], 'all connection attempts failed'),
      new KnexTimeoutError('Knex: Timeout acquiring a connection. The pool is probably full.'),
      { code: 'SQLITE_BUSY', message: 'database is locked' },
      { code: 'SQLITE_BUSY_SNAPSHOT', message: 'database is locked' },
      { code: '57014', message: 'canceling statement due to statement timeout' },
      { code: '53300', message: 'sorry, too many clients already' },
      { code: '40P01', message: 'deadlock detected' },
      new Error('Connection terminated due to connection timeout'),
      { code: 'SlowDown', message: 'Please reduce your request rate.' },
      new DependencyUnavailableError('Redis lock failed: no answer within 1000 ms', { cause: null, dependency: 'Redis server' }),
    ];
    for (const error of cases) {
      const answer = dependencyFailure(error);
      expect(answer, String((error as Error).message)).toBeInstanceOf(ServiceUnavailableError);
      expect(answer).toMatchObject({ status: 503, code: 'unavailable', retryAfterSeconds: 2, details: { retry_after_seconds: 2 } });
      expect(answer?.message).not.toMatch(/127\.0\.0\.1|statement|Knex/);
    }
    expect(dependencyFailure(cases.at(-1))?.message).toContain('Redis server');
  });

  it('leaves failures that may have taken effect, and programming errors, to the 500 path', () => {
    const ambiguous: unknown[] = [
      Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }),
      // An established connection that died (keepalive, retransmissions) reports the ICMP error on read: maybe committed.
      Object.assign(new Error('read EHOSTUNREACH'), { code: 'EHOSTUNREACH', syscall: 'read' }),
      new KnexTimeoutError('Defined query timeout of 1000ms exceeded when running query.'),
      new Error('Connection terminated unexpectedly'),
      new Error('Query read timeout'),
      { code: '23505', message: 'duplicate key value violates unique constraint' },
      { code: 'SQLITE_IOERR', message: 'disk I/O error' },
      new TypeError("Cannot read properties of undefined (reading 'id')"),
      'a string',
      null,
    ];
    for (const error of ambiguous) expect(dependencyFailure(error), String(error)).toBeNull();
  });

  it('stops at 8 levels of causes, and survives a cause chain that loops', () => {
    let deep: Error = Object.assign(new Error('deepest'), { code: 'ENOSPC' });
    for (let level = 0; level < 20; level += 1) deep = new Error(`level ${level}`, { cause: deep });
    expect(dependencyFailure(deep)).toBeNull();
    const loop = new Error('a') as Error & { cause?: unknown };
    loop.cause = new Error('b', { cause: loop });
    expect(dependencyFailure(loop)).toBeNull();
  });
});

describe('publicReason', () => {
  it('names the error code, or the message without hosts, addresses or URLs', async () => {
    expect(publicReason(new Error('wrapped', { cause: await refusedConnection() }))).toBe('ECONNREFUSED');
    expect(publicReason(new Error('Cannot connect to redis://:secret@cache.internal:6379/0'))).toBe('Cannot connect to <address>');
    expect(publicReason(new Error('connect to db.internal:5432 timed out\nstack'))).toBe('connect to <address> timed out');
    expect(publicReason(new Error('no route to 10.0.0.5:5432 or [fd00::5]:5432'))).toBe('no route to <address> or <address>');
    expect(publicReason(new Error('no answer within 250 ms'))).toBe('no answer within 250 ms');
    expect(publicReason(new Error('connect to fd00::5 port 5432 failed'))).toBe('connect to <address> port 5432 failed');
  });
});
