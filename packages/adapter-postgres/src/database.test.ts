import { randomBytes } from 'node:crypto';
import { dependencyFailure, ServiceUnavailableError, type SqlDatabase } from '@agentinfra/core';
import { postgresAvailability, startTcpProxy, testDatabaseUrl } from '@agentinfra/test-services';
import knexFactory from 'knex';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { connectionLocation } from './connection-location.js';
import { createPostgresDatabase } from './database.js';

describe('createPostgresDatabase options', () => {
  it('rejects a URL of another scheme, a schema that is not a plain identifier and an empty pool', () => {
    expect(() => createPostgresDatabase({ url: 'mysql://root@localhost/db' })).toThrow(/postgres/);
    expect(() => createPostgresDatabase({ url: 'postgres://localhost/db', schema: 'a"; drop table x; --' })).toThrow(/identifier/);
    expect(() => createPostgresDatabase({ url: 'postgres://localhost/db', poolMax: 0 })).toThrow();
  });

  it('keeps the password out of validation errors', () => {
    let caught: unknown;
    try {
      createPostgresDatabase({ url: 'mysql://app:s3cret@db.internal/agents' });
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(Error);
    expect(`${String(caught)} ${JSON.stringify(caught)}`).not.toContain('s3cret');
  });

  it('describes host, port, database and schema without credentials, before connecting', async () => {
    const withSchema = createPostgresDatabase({
      url: 'postgres://app:s3cret@db.internal:6432/agents',
      schema: 'tenant_1',
    });
    const plain = createPostgresDatabase({ url: 'postgresql://app:s3cret@db.internal/agents' });
    expect(withSchema.describe()).toBe('postgres (db.internal:6432/agents, schema tenant_1)');
    expect(plain.describe()).toBe('postgres (db.internal:5432/agents)');
    expect(withSchema.dialect).toBe('postgres');
    expect(withSchema.capabilities).toEqual({ returning: true, skipLocked: true, multiProcess: true });
    await Promise.all([withSchema.close(), plain.close()]);
  });

  it('reads socket folders, default ports and default databases like libpq', () => {
    expect(connectionLocation('postgres:///agents?host=/var/run/postgresql')).toBe('/var/run/postgresql:5432/agents');
    expect(connectionLocation('postgres://app@db')).toBe('db:5432/app');
    expect(connectionLocation('postgres://db:5433')).toBe('db:5433/postgres');
  });

  it('wraps a connection failure with the location and the driver error as cause, without the password', async () => {
    const db = createPostgresDatabase({ url: 'postgres://app:s3cret@127.0.0.1:1/agents' });
    const error = await db.ping().then(
      () => undefined,
      (caught: unknown) => caught as Error,
    );
    await db.close();
    expect(error?.message).toContain('postgres (127.0.0.1:1/agents) did not answer');
    expect(error?.message).toContain('ECONNREFUSED');
    expect(error?.message).not.toContain('s3cret');
    expect(error?.cause).toBeInstanceOf(Error);
  });

  it("hands knex's own messages to onClientLog instead of the console, without the password", async () => {
    const messages: Array<{ level: string; message: string }> = [];
    const db = createPostgresDatabase({
      url: 'postgres://app:s3cret@127.0.0.1:1/agents',
      onClientLog: (level, message) => messages.push({ level, message }),
    });
    await db.ping().catch(() => undefined);
    await db.close();
    expect(messages).toContainEqual({ level: 'warn', message: expect.stringContaining('ECONNREFUSED') });
    expect(JSON.stringify(messages)).not.toContain('s3cret');
    // knex appends the error's stack to "Acquire connection error": one log line per outage, not a dozen frames.
    for (const { message } of messages) expect(message).not.toMatch(/\n\s+at /);
  });
});

describe.runIf(postgresAvailability().available)('createPostgresDatabase on a server', () => {
  const url = testDatabaseUrl();
  const opened: Array<{ db: SqlDatabase; schema: string }> = [];
  const open = (options: { statementTimeoutMs?: number; onNotice?: (line: string) => void } = {}) => {
    const schema = `t_${randomBytes(6).toString('hex')}`;
    const db = createPostgresDatabase({ url, schema, ...options });
    opened.push({ db, schema });
    return { db, schema };
  };

  afterEach(async () => {
    for (const { db, schema } of opened.splice(0)) {
      await db.knex.raw('drop schema if exists ?? cascade', [schema]);
      await db.close();
    }
  });

  it('parses int8 as numbers on its own connections only, and leaves numeric as text', async () => {
    const { db } = open();
    const { rows } = await db.knex.raw('select 9007199254740991::int8 as big, -42::int8 as negative, 12.50::numeric as amount');
    expect(rows).toEqual([{ big: 9007199254740991, negative: -42, amount: '12.50' }]);
    expect(pg.types.getTypeParser(20, 'text')('42')).toBe('42');
  });

  it('sets statement_timeout on every connection', async () => {
    const { db } = open({ statementTimeoutMs: 200 });
    const settings = await Promise.all(
      [1, 2, 3].map(() => db.knex.transaction((trx) => trx.raw("select current_setting('statement_timeout') as value, pg_sleep(0.05)"))),
    );
    expect(settings.map((result) => result.rows[0].value)).toEqual(['200ms', '200ms', '200ms']);
    await expect(db.knex.raw('select pg_sleep(2)')).rejects.toMatchObject({ code: '57014' });
  });

  it('creates its schema at first use, even from parallel first queries, and keeps public on the search path', async () => {
    const { db, schema } = open();
    const paths = await Promise.all(
      Array.from({ length: 5 }, () =>
        db.knex.transaction((trx) => trx.raw("select array_to_string(current_schemas(false), ',') as path, pg_sleep(0.02)")),
      ),
    );
    for (const result of paths) expect(result.rows[0].path).toBe(`${schema},public`);
    await db.knex.schema.createTable('things', (table) => table.string('id').primary());
    const { rows } = await db.knex.raw('select table_schema from information_schema.tables where table_name = ?', ['things']);
    expect(rows).toEqual([{ table_schema: schema }]);
  });

  it('passes server notices to onNotice', async () => {
    const lines: string[] = [];
    const { db } = open({ onNotice: (line) => lines.push(line) });
    await db.knex.raw("do $$ begin raise notice 'index % built', 7; end $$");
    expect(lines).toEqual(['NOTICE: index 7 built']);
  });

  it('fails in ways the kernel answers 503: no server, no free pooled connection, a cancelled statement, a lock not granted', async () => {
    const quiet = () => undefined;
    const unreachable = createPostgresDatabase({ url: 'postgres://app@127.0.0.1:1/agents', onClientLog: quiet });
    const refused = await unreachable.knex.raw('select 1').catch((error: unknown) => error);
    await unreachable.close();
    // 1 s, not less: the timeout also covers this connection's schema set-up and the table below on a loaded server.
    const { db } = open({ statementTimeoutMs: 1_000 });
    const cancelled = await db.knex.raw('select pg_sleep(3)').catch((error: unknown) => error);
    await db.knex.schema.createTable('counters', (table) => table.string('id').primary());
    await db.knex('counters').insert({ id: 'a' });
    const lockWait = await db.knex
      .transaction(async (holder) => {
        await holder('counters').where({ id: 'a' }).forUpdate();
        return db.knex.transaction(async (waiter) => {
          await waiter.raw("set local lock_timeout = '50ms'");
          await waiter('counters').where({ id: 'a' }).forUpdate();
        });
      })
      .catch((error: unknown) => error);
    const small = knexFactory({
      client: 'pg',
      connection: url,
      pool: { min: 0, max: 1 },
      acquireConnectionTimeout: 100,
      log: { warn: quiet, error: quiet, debug: quiet, deprecate: quiet },
    });
    const exhausted = await small
      .transaction(() => small.raw('select 1'))
      .catch((error: unknown) => error)
      .finally(() => small.destroy());
    expect(refused).toMatchObject({ code: 'ECONNREFUSED' });
    expect(cancelled).toMatchObject({ code: '57014' });
    expect(lockWait).toMatchObject({ code: '55P03' });
    expect(exhausted).toMatchObject({ name: 'KnexTimeoutError' });
    for (const failure of [refused, cancelled, lockWait, exhausted]) {
      expect(dependencyFailure(failure), String(failure)).toBeInstanceOf(ServiceUnavailableError);
    }
  });

  it('recognises SQLSTATE 23505 only', async () => {
    const { db } = open();
    await db.knex.schema.createTable('keys', (table) => table.string('id').primary());
    await db.knex('keys').insert({ id: 'a' });
    const duplicate = await db
      .knex('keys')
      .insert({ id: 'a' })
      .catch((error: unknown) => error);
    expect(duplicate).toMatchObject({ code: '23505' });
    expect(db.isUniqueViolation(duplicate)).toBe(true);
    expect(db.isUniqueViolation({ code: '23503' })).toBe(false);
    expect(db.isUniqueViolation({ code: 23505 })).toBe(false);
  });
});

describe.runIf(postgresAvailability().available)('createPostgresDatabase when the server goes silent', () => {
  it('fails a query 5 s after statement_timeout instead of waiting for ever, and never uses that connection again', async () => {
    const target = new URL(testDatabaseUrl());
    const proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) });
    const proxied = new URL(target);
    proxied.hostname = '127.0.0.1';
    proxied.port = String(proxy.port);
    const db = createPostgresDatabase({ url: proxied.toString(), statementTimeoutMs: 200 });
    try {
      await db.ping();
      // The connections open now go silent for good; new ones work (a path that died while the server lives on).
      proxy.silence();
      const started = Date.now();
      await expect(db.ping()).rejects.toThrow(/did not answer/);
      expect(Date.now() - started).toBeLessThan(8_000);
      // The silent connection was closed and left the pool: the next query opens a new one and is answered at once.
      const again = Date.now();
      await db.ping();
      expect(Date.now() - again).toBeLessThan(2_000);
    } finally {
      await proxy.cut();
      await db.close();
    }
  }, 20_000);
});
