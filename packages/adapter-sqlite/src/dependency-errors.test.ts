import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { dependencyFailure, InsufficientStorageError, ServiceUnavailableError } from '@agentinfra/core';
import { afterEach, describe, expect, it } from 'vitest';
import { createSqliteDatabase } from './database.js';

describe('SQLite failures as the kernel answers them', () => {
  const folders: string[] = [];
  afterEach(async () => {
    for (const folder of folders.splice(0)) await rm(folder, { recursive: true, force: true });
  });
  const file = async () => {
    const folder = await mkdtemp(join(tmpdir(), 'agentinfra-sqlite-errors-'));
    folders.push(folder);
    return join(folder, 'test.db');
  };

  it('a full database (SQLITE_FULL) is 507 and the failed write leaves nothing behind', async () => {
    const db = createSqliteDatabase({ filename: await file() });
    try {
      await db.knex.schema.createTable('notes', (table) => table.text('body'));
      const [{ page_count: pages }] = (await db.knex.raw('pragma page_count')) as [{ page_count: number }];
      await db.knex.raw(`pragma max_page_count = ${pages + 1}`);
      const failure = await db
        .knex('notes')
        .insert({ body: 'x'.repeat(64 * 1024) })
        .catch((error: unknown) => error);
      expect(failure).toMatchObject({ code: 'SQLITE_FULL' });
      expect(dependencyFailure(failure)).toBeInstanceOf(InsufficientStorageError);
      expect(await db.knex('notes').count({ n: '*' })).toEqual([{ n: 0 }]);
    } finally {
      await db.close();
    }
  });

  it('a database another process keeps locked past busy_timeout (SQLITE_BUSY) is 503', async () => {
    const filename = await file();
    const holder = createSqliteDatabase({ filename });
    const waiter = createSqliteDatabase({ filename, busyTimeoutMs: 50 });
    try {
      await holder.knex.schema.createTable('notes', (table) => table.text('body'));
      let release: () => void = () => undefined;
      let locked: () => void = () => undefined;
      const holding = new Promise<void>((resolve) => {
        locked = resolve;
      });
      const held = holder.knex.transaction(async (trx) => {
        await trx('notes').insert({ body: 'held' });
        locked();
        await new Promise<void>((resolve) => {
          release = resolve;
        });
      });
      await holding;
      const failure = await waiter
        .knex('notes')
        .insert({ body: 'blocked' })
        .catch((error: unknown) => error);
      release();
      await held;
      expect(failure).toMatchObject({ code: expect.stringMatching(/^SQLITE_BUSY/) });
      expect(dependencyFailure(failure)).toBeInstanceOf(ServiceUnavailableError);
    } finally {
      await Promise.all([holder.close(), waiter.close()]);
    }
  });
});
