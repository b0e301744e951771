import { statSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { threadNiceValues, threadsNicedSince } from '@agentinfra/core/testing';
import { BACKGROUND_THREAD_NICE } from '@agentinfra/core/threads';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createSqliteDatabase, WAL_CHECKPOINTER_DELAY_MS } from './database.js';
import { startWalCheckpointer, WAL_CHECKPOINT_INTERVAL_MS } from './wal-checkpointer.js';

const MB = 1024 * 1024;
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

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

  it.runIf(process.platform === 'linux')('checkpoints at background priority', async () => {
    folder = await mkdtemp(join(tmpdir(), 'agentinfra-wal-'));
    const filename = join(folder, 'agentinfra.db');
    // A query opens the pooled connection, which creates the file; closing an unused database may leave none.
    const db = createSqliteDatabase({ filename });
    await db.ping();
    await db.close();
    const before = threadNiceValues();
    const checkpointer = startWalCheckpointer({ filename, onFailure: () => undefined });
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
      startWalCheckpointer({ filename: join(folder, 'missing.db'), onFailure: resolve });
    });
    expect(reason).toMatch(/SQLITE_CANTOPEN|unable to open/);
  });
});
