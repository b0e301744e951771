import { statSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { threadNiceValues, threadsNicedSince } from '@agentinfra/core/testing';
import { BACKGROUND_THREAD_NICE } from '@agentinfra/core/threads';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createSqliteDatabase, WAL_CHECKPOINTER_DELAY_MS } from './database.js';
import { startWalCheckpointer, truncateWal, WAL_CHECKPOINT_INTERVAL_MS, WAL_SIZE_LIMIT_BYTES } from './wal-checkpointer.js';

const MB = 1024 * 1024;
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const walSize = (filename: string) => {
  try {
    return statSync(`${filename}-wal`).size;
  } catch {
    return 0;
  }
};

describe('WAL checkpoints in a worker thread', () => {
  let folder = '';
  afterEach(async () => {
    await rm(folder, { recursive: true, force: true });
  });

  it('starts after a delay, then copies the WAL into the database file while the connection never checkpoints in its own commits', async () => {
    folder = await mkdtemp(join(tmpdir(), 'agentinfra-wal-'));
    const filename = join(folder, 'agentinfra.db');
    const db = createSqliteDatabase({ filename });
    try {
      const automatic = async () => ((await db.knex.raw('pragma wal_autocheckpoint')) as Array<{ wal_autocheckpoint: number }>)[0];
      expect(await automatic()).toEqual({ wal_autocheckpoint: 1000 });
      await vi.waitFor(async () => expect(await automatic()).toEqual({ wal_autocheckpoint: 0 }), {
        timeout: 4 * WAL_CHECKPOINTER_DELAY_MS,
      });
      await db.knex.schema.createTable('blobs', (table) => {
        table.increments('id');
        table.text('body').notNullable();
      });
      const body = 'x'.repeat(64 * 1024);
      for (let round = 0; round < 48; round += 1) {
        await db.knex('blobs').insert(Array.from({ length: 8 }, () => ({ body })));
        await pause(WAL_CHECKPOINT_INTERVAL_MS / 5);
      }
      // With no checkpoint at all the 24 MB would stay in the WAL and the database file would keep its first pages.
      await vi.waitFor(() => expect(statSync(filename).size).toBeGreaterThan(20 * MB), {
        timeout: 40 * WAL_CHECKPOINT_INTERVAL_MS,
        interval: WAL_CHECKPOINT_INTERVAL_MS,
      });
      expect(Number((await db.knex('blobs').count({ n: '*' }))[0]?.n)).toBe(48 * 8);
      expect(await automatic()).toEqual({ wal_autocheckpoint: 0 });
    } finally {
      await db.close();
    }
  });

  it('keeps the WAL file bounded under transactions that never pause, failing none, and cuts it back once they stop', async () => {
    folder = await mkdtemp(join(tmpdir(), 'agentinfra-wal-'));
    const filename = join(folder, 'agentinfra.db');
    const db = createSqliteDatabase({ filename });
    try {
      await db.knex.schema.createTable('blobs', (table) => {
        table.increments('id');
        table.text('body').notNullable();
      });
      await vi.waitFor(
        async () => expect((await db.knex.raw('pragma wal_autocheckpoint')) as unknown[]).toEqual([{ wal_autocheckpoint: 0 }]),
        { timeout: 4 * WAL_CHECKPOINTER_DELAY_MS },
      );
      // Writers that take turns on the connection, so that some commit is always under way: a PASSIVE
      // checkpoint never finds the WAL idle, SQLite never restarts it, and with PASSIVE checkpoints alone
      // the file grew to all the ~95 MiB written. The pause bounds the write rate (under 10 MiB of WAL a
      // second), so the WAL grows a few MiB between two turns of the thread, or a second's worth when
      // a loaded host runs the thread late.
      const writers = 4;
      const commits = 1_200;
      const body = 'x'.repeat(3 * 1024);
      let peak = 0;
      await Promise.all(
        Array.from({ length: writers }, async () => {
          for (let commit = 0; commit < commits; commit += 1) {
            // Read, then write, in one transaction (as most services do): a WAL reset from another
            // connection between the two made the write fail with SQLITE_BUSY_SNAPSHOT.
            await db.knex.transaction(async (trx) => {
              await trx('blobs').select('id').orderBy('id', 'desc').first();
              await trx('blobs').insert(Array.from({ length: 2 }, () => ({ body })));
            });
            peak = Math.max(peak, walSize(filename));
            await pause(5);
          }
        }),
      );
      expect(Number((await db.knex('blobs').count({ n: '*' }))[0]?.n)).toBe(writers * commits * 2);
      expect(peak).toBeLessThan(32 * MB);
      expect(peak).toBeGreaterThan(0);
      // Once writes stop, the next turn copies the rest and empties a WAL above the limit, without another write.
      await vi.waitFor(() => expect(walSize(filename)).toBeLessThanOrEqual(WAL_SIZE_LIMIT_BYTES), {
        timeout: 20_000,
        interval: WAL_CHECKPOINT_INTERVAL_MS,
      });
      expect(((await db.knex.raw('pragma journal_size_limit')) as unknown[])[0]).toEqual({ journal_size_limit: WAL_SIZE_LIMIT_BYTES });
    } finally {
      await db.close();
    }
  }, 120_000);

  // Review: while a backup held a read, each report slept the full busy timeout on the event loop.
  it('truncates without waiting: busy while another connection reads, emptied once it stops', async () => {
    folder = await mkdtemp(join(tmpdir(), 'agentinfra-wal-'));
    const filename = join(folder, 'agentinfra.db');
    const writer = new Database(filename);
    const reader = new Database(filename);
    try {
      writer.pragma('journal_mode = WAL');
      writer.pragma('wal_autocheckpoint = 0');
      writer.pragma('busy_timeout = 5000');
      writer.exec('create table t (body text)');
      reader.exec('begin');
      reader.prepare('select count(*) from t').get();
      writer.prepare('insert into t values (?)').run('x'.repeat(100_000));
      expect(truncateWal(writer, 5000)).toBe(false);
      expect(writer.pragma('busy_timeout', { simple: true })).toBe(5000);
      reader.exec('commit');
      expect(truncateWal(writer, 5000)).toBe(true);
      expect(walSize(filename)).toBe(0);
    } finally {
      reader.close();
      writer.close();
    }
  });

  it.runIf(process.platform === 'linux')('checkpoints at background priority', async () => {
    folder = await mkdtemp(join(tmpdir(), 'agentinfra-wal-'));
    const filename = join(folder, 'agentinfra.db');
    // A query opens the pooled connection, which creates the file; closing an unused database may leave none.
    const db = createSqliteDatabase({ filename });
    await db.ping();
    await db.close();
    const before = threadNiceValues();
    const checkpointer = startWalCheckpointer({ filename, onLarge: () => undefined, onFailure: () => undefined });
    try {
      // The thread loads tsx and better-sqlite3 first: seconds when the whole suite runs on 2 cores.
      await vi.waitFor(() => expect(threadsNicedSince(before, BACKGROUND_THREAD_NICE)).toHaveLength(1), { timeout: 20_000 });
      expect(threadNiceValues().get(process.pid)).toBe(before.get(process.pid));
    } finally {
      await checkpointer.close();
    }
  });

  it('reports a thread that ended on its own, so that the caller checkpoints again', async () => {
    folder = await mkdtemp(join(tmpdir(), 'agentinfra-wal-'));
    const reason = await new Promise<string>((resolve) => {
      startWalCheckpointer({ filename: join(folder, 'missing.db'), onLarge: () => undefined, onFailure: resolve });
    });
    expect(reason).toMatch(/SQLITE_CANTOPEN|unable to open/);
  });
});
