import { createHash, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { type FileHandle, mkdtemp, open, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createFsBlobStore } from './index.js';

/** One fsync or fdatasync the store asked for, and whether the object being stored was in place at that moment. */
interface SyncCall {
  ino: number;
  folder: boolean;
  objectInPlace: boolean;
}

/** The shard folder of `key` under `dir`, as laid out by the store (`objects/<2 hex>/<sha256>`). */
const shardOf = (dir: string, key: string) => join(dir, 'objects', createHash('sha256').update(key, 'utf8').digest('hex').slice(0, 2));
const objectPath = (dir: string, key: string) => join(shardOf(dir, key), createHash('sha256').update(key, 'utf8').digest('hex'));
const byNumber = (a: number, b: number) => a - b;
/** The inode numbers of `paths`, sorted. */
const inodes = async (...paths: string[]) => (await Promise.all(paths.map(async (path) => (await stat(path)).ino))).sort(byNumber);

/** A key whose object lives in the same shard folder as `key`'s, and another whose lives elsewhere. */
function keysNextTo(dir: string, key: string) {
  const keys = Array.from({ length: 4096 }, (_, index) => `key-${index}`);
  return {
    sameShard: keys.find((other) => shardOf(dir, other) === shardOf(dir, key))!,
    otherShard: keys.find((other) => shardOf(dir, other) !== shardOf(dir, key))!,
  };
}

describe('fs blob store with durable: true', () => {
  let dir: string;
  let calls: SyncCall[];
  /** Tells whether the object of the operation under test is in place; read at each sync. */
  let objectInPlace: () => boolean;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'agentinfra-fs-durable-'));
    calls = [];
    objectInPlace = () => false;
    const probe = await open(dir, 'r');
    const prototype = Object.getPrototypeOf(probe) as FileHandle;
    await probe.close();
    for (const method of ['sync', 'datasync'] as const) {
      const original = prototype[method];
      vi.spyOn(prototype, method).mockImplementation(async function (this: FileHandle) {
        const stats = await this.stat();
        calls.push({ ino: stats.ino, folder: stats.isDirectory(), objectInPlace: objectInPlace() });
        return original.call(this);
      });
    }
  });
  afterEach(async () => {
    vi.restoreAllMocks();
    await rm(dir, { recursive: true, force: true });
  });

  const store = (durable: boolean) => createFsBlobStore({ dir, publicUrl: 'http://127.0.0.1', signingKey: randomBytes(32), durable }).store;
  const folderSyncs = () => calls.filter((call) => call.folder);
  /** The inode numbers of the folders synced, sorted (a folder synced twice shows twice). */
  const syncedFolders = () =>
    folderSyncs()
      .map((call) => call.ino)
      .sort(byNumber);

  it('fsyncs the file, renames it into place, then fsyncs each folder the put changed once', async () => {
    const { put } = store(true);
    objectInPlace = () => existsSync(objectPath(dir, 'a'));
    await put({ key: 'a', body: Buffer.from('first') });

    // The data first, while the object is not yet visible; every folder after the rename.
    expect(calls[0]).toMatchObject({ folder: false, objectInPlace: false });
    expect(folderSyncs().every((call) => call.objectInPlace)).toBe(true);
    // The shard renamed into, `tmp` renamed out of, `objects` (the shard was created) and `dir` (the store created
    // `objects` and `tmp`), each once.
    expect(syncedFolders()).toEqual(await inodes(shardOf(dir, 'a'), join(dir, 'tmp'), join(dir, 'objects'), dir));

    // Into an existing shard: only the shard and `tmp` changed.
    calls = [];
    await put({ key: 'a', body: Buffer.from('second') });
    expect(syncedFolders()).toEqual(await inodes(shardOf(dir, 'a'), join(dir, 'tmp')));
  });

  it('fsyncs the folders renamed into and out of after a move, and a shard moved within once', async () => {
    const { put, move } = store(true);
    const { sameShard, otherShard } = keysNextTo(dir, 'a');
    await put({ key: 'a', body: Buffer.from('upload') });

    calls = [];
    objectInPlace = () => existsSync(objectPath(dir, otherShard)) && !existsSync(objectPath(dir, 'a'));
    expect(await move({ from: 'a', to: otherShard })).toBe(true);
    expect(folderSyncs().every((call) => call.objectInPlace)).toBe(true);
    expect(syncedFolders()).toEqual(await inodes(shardOf(dir, otherShard), shardOf(dir, 'a'), join(dir, 'objects')));

    await move({ from: otherShard, to: 'a' });
    calls = [];
    objectInPlace = () => existsSync(objectPath(dir, sameShard)) && !existsSync(objectPath(dir, 'a'));
    await move({ from: 'a', to: sameShard });
    expect(folderSyncs().every((call) => call.objectInPlace)).toBe(true);
    expect(syncedFolders()).toEqual(await inodes(shardOf(dir, 'a')));
  });

  it('fsyncs each shard folder a delete removed objects from once, after removing them', async () => {
    const { put, delete: remove } = store(true);
    const { sameShard, otherShard } = keysNextTo(dir, 'a');
    for (const key of ['a', sameShard, otherShard]) await put({ key, body: Buffer.from(key) });

    calls = [];
    objectInPlace = () => existsSync(objectPath(dir, 'a')) || existsSync(objectPath(dir, otherShard));
    await remove({ keys: ['a', sameShard, otherShard, 'never-stored'] });
    expect(folderSyncs().some((call) => call.objectInPlace)).toBe(false);
    // The missing object changed no folder.
    expect(syncedFolders()).toEqual(await inodes(shardOf(dir, 'a'), shardOf(dir, otherShard)));
  });

  it('syncs no folder when durable is false', async () => {
    const { put, move, delete: remove } = store(false);
    await put({ key: 'a', body: Buffer.from('upload') });
    await move({ from: 'a', to: 'b' });
    await remove({ keys: ['b'] });
    expect(calls).toEqual([]);
  });
});
