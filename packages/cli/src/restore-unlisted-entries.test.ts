import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createSqliteDatabase } from '@agentinfra/adapter-sqlite';
import * as tar from 'tar';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { binPath, freshKeys, runCliInProcess } from './serve-process.test-support.js';

const sha256 = (data: Buffer) => createHash('sha256').update(data).digest('hex');

/** Largest file the restore may write in the tests below: 2048 blocks of 512 bytes (`ulimit -f` in sh). */
const FILE_SIZE_LIMIT_BLOCKS = 2048;
/** Far past that limit, but a few KiB gzipped. */
const BIG = Buffer.alloc(8 * 1024 * 1024);

// Probe on a real server: `restore` unpacked everything before reading the manifest, so a 3.7 MB archive holding
// an unlisted 3 GiB file of zeros wrote about 2 GB into the data directory before refusing; it restored folders no
// backup holds (`agentinfra.db-wal/`, `.agentinfra-restore-zzz/`) and a junk file listed as agentinfra.db, reported
// success, and `serve` then failed.
describe('agentinfra restore writes only what the manifest lists', () => {
  const dir = mkdtempSync(join(tmpdir(), 'agentinfra-restore-unlisted-'));
  const keys = freshKeys();
  let database: Buffer;

  beforeAll(async () => {
    const file = join(dir, 'made.db');
    const made = createSqliteDatabase({ filename: file });
    await made.knex.raw('CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT)');
    await made.knex('notes').insert({ text: 'kept' });
    await made.close();
    database = readFileSync(file);
  });

  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  /**
   * A gzipped tar whose manifest lists `listed` (path and content, from which its size and checksum) and that holds
   * `entries` in this order (the manifest first unless they name it): a Buffer is a file, null a folder, a string a
   * symbolic link to it.
   */
  async function craft(listed: Record<string, Buffer>, entries: Array<[string, Buffer | string | null]>): Promise<string> {
    const unpacked = mkdtempSync(join(dir, 'unpacked-'));
    const manifest = {
      format: 'agentinfra-backup/1',
      version: '0.0.0',
      created_at: new Date().toISOString(),
      migrations: {},
      counts: {},
      files: Object.entries(listed).map(([path, data]) => ({ path, bytes: data.length, sha256: sha256(data) })),
      master_key_included: false,
    };
    writeFileSync(join(unpacked, 'manifest.json'), JSON.stringify(manifest));
    for (const [path, content] of entries) {
      if (path === 'manifest.json') continue;
      const at = join(unpacked, path);
      mkdirSync(content === null ? at : dirname(at), { recursive: true });
      if (typeof content === 'string') symlinkSync(content, at);
      else if (content) writeFileSync(at, content);
    }
    const archive = join(dir, `crafted-${randomBytes(4).toString('hex')}.tar.gz`);
    const paths = entries.map(([path]) => path);
    await tar.create({ gzip: true, file: archive, cwd: unpacked, portable: true, noDirRecurse: true }, [
      ...(paths.includes('manifest.json') ? [] : ['manifest.json']),
      ...paths,
    ]);
    return archive;
  }

  /**
   * `agentinfra restore` into a new data directory, in a process of its own that may write no file larger than
   * {@link FILE_SIZE_LIMIT_BLOCKS}: for the archives whose refusal must come before any byte of a big file is written.
   */
  function restoreLimited(archive: string, dataDir: string): Promise<{ code: number | null; stderr: string }> {
    return new Promise((resolve) => {
      const child = spawn(
        'sh',
        ['-c', `ulimit -f ${FILE_SIZE_LIMIT_BLOCKS} && exec "$0" "$@"`, process.execPath, binPath, 'restore', '--from', archive],
        { cwd: dir, env: { ...process.env, ...keys, AGENTINFRA_DATA_DIR: dataDir } },
      );
      let stderr = '';
      child.stderr.on('data', (chunk) => (stderr += chunk));
      child.stdout.resume();
      child.on('close', (code) => resolve({ code, stderr }));
    });
  }

  it.each([
    ['an unlisted file', { 'blobs/objects/zz/big': BIG }, 'blobs/objects/zz/big, which its manifest does not list'],
    [
      'a listed file of another size than listed',
      { 'blobs/objects/ab/abcd': BIG },
      `blobs/objects/ab/abcd, ${BIG.length} bytes long, where its manifest lists 16`,
    ],
  ])('refuses %s at its header, writing none of it', async (_name, big, message) => {
    const small = randomBytes(16);
    const listed = { 'agentinfra.db': database, 'blobs/objects/ab/abcd': small };
    const archive = await craft(listed, [
      ['agentinfra.db', database],
      ...Object.entries(big),
      ...('blobs/objects/ab/abcd' in big ? [] : ([['blobs/objects/ab/abcd', small]] as Array<[string, Buffer]>)),
    ]);
    const dataDir = join(dir, `data-${randomBytes(4).toString('hex')}`);
    const result = await restoreLimited(archive, dataDir);
    // Writing it would have failed on the file size limit (EFBIG) instead.
    expect(result.stderr).toBe(`agentinfra: the backup holds ${message}: refusing to restore.\n`);
    expect(result.code).toBe(1);
    expect(existsSync(dataDir)).toBe(false);
  });

  /** `agentinfra restore` into a new data directory, run in this process (runCliInProcess): no file here is big. */
  const restore = (archive: string, dataDir: string) =>
    runCliInProcess(['restore', '--from', archive], { cwd: dir, env: { ...keys, AGENTINFRA_DATA_DIR: dataDir } });

  it.each([
    ['agentinfra.db-wal/', [['agentinfra.db-wal', null]], 'the folder agentinfra.db-wal/, which holds no file its manifest lists'],
    [
      '.agentinfra-restore-zzz/',
      [['.agentinfra-restore-zzz', null]],
      'the folder .agentinfra-restore-zzz/, which holds no file its manifest lists',
    ],
    ['blobs/tmp/', [['blobs/tmp', null]], 'the folder blobs/tmp/, which holds no file its manifest lists'],
    ['a symbolic link', [['blobs/objects/ab/link', '/etc/passwd']], 'blobs/objects/ab/link, an entry of type SymbolicLink'],
  ] as Array<[string, Array<[string, Buffer | string | null]>, string]>)(
    'refuses %s, which no backup holds, restoring nothing',
    async (_name, extra, message) => {
      const small = randomBytes(16);
      const archive = await craft({ 'agentinfra.db': database, 'blobs/objects/ab/abcd': small }, [
        ['agentinfra.db', database],
        ['blobs', null],
        ['blobs/objects', null],
        ['blobs/objects/ab', null],
        ['blobs/objects/ab/abcd', small],
        ...extra,
      ]);
      const dataDir = join(dir, `data-${randomBytes(4).toString('hex')}`);
      const result = await restore(archive, dataDir);
      expect(result.stderr).toContain(message);
      expect(result.stderr).toContain('refusing to restore');
      expect(result.code).toBe(1);
      expect(existsSync(dataDir)).toBe(false);
    },
  );

  it('refuses an archive that does not begin with manifest.json', async () => {
    const archive = await craft({ 'agentinfra.db': database }, [
      ['agentinfra.db', database],
      ['manifest.json', null],
    ]);
    const dataDir = join(dir, 'data-late-manifest');
    const result = await restore(archive, dataDir);
    expect(result.stderr).toBe(
      `agentinfra: ${archive} is not an agentinfra backup: its first entry is "agentinfra.db", where a backup begins with manifest.json.\n`,
    );
    expect(result.code).toBe(1);
    expect(existsSync(dataDir)).toBe(false);
  });

  it('refuses a junk agentinfra.db with the right checksum after SQLite’s quick_check, moving nothing into place', async () => {
    const junk = randomBytes(8192);
    const archive = await craft({ 'agentinfra.db': junk }, [['agentinfra.db', junk]]);
    const dataDir = join(dir, 'data-junk');
    mkdirSync(dataDir);
    const result = await restore(archive, dataDir);
    expect(result.stderr.split('\n').at(-2)).toBe(
      `agentinfra: ${archive} holds an agentinfra.db that is not a sound SQLite database (file is not a database): refusing to restore.`,
    );
    expect(result.code).toBe(1);
    expect(readdirSync(dataDir)).toEqual([]);
  });

  // Probe: the check opened the database read/write as serve does: a database in rollback-journal mode, its checksum
  // just verified, was switched to WAL mode (its header rewritten) and -wal/-shm files were made in the stage.
  it('checks the database without changing it: a rollback-journal database is restored byte for byte, alone', async () => {
    const file = join(dir, 'rollback.db');
    const made = createSqliteDatabase({ filename: file });
    await made.knex.raw('CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT)');
    await made.knex('notes').insert({ text: 'kept' });
    await made.knex.raw('PRAGMA journal_mode = DELETE');
    await made.close();
    const rollback = readFileSync(file);
    const archive = await craft({ 'agentinfra.db': rollback }, [['agentinfra.db', rollback]]);
    const dataDir = join(dir, 'data-rollback');
    const result = await restore(archive, dataDir);
    expect(result.stderr).not.toContain('agentinfra:');
    expect(result.code).toBe(0);
    expect(sha256(readFileSync(join(dataDir, 'agentinfra.db')))).toBe(sha256(rollback));
    expect(readdirSync(dataDir)).toEqual(['agentinfra.db']);
  });

  it('refuses a database damaged past its header, moving nothing into place', async () => {
    const file = join(dir, 'damaged.db');
    const made = createSqliteDatabase({ filename: file });
    await made.knex.raw('CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT)');
    for (let i = 0; i < 20; i += 1) await made.knex('notes').insert({ text: randomBytes(400).toString('hex') });
    await made.close();
    const damaged = readFileSync(file);
    // Page 2 onwards (4096-byte pages): the b-tree pages of the table.
    damaged.fill(0xa5, 4096 + 16, 4096 * 2);
    const archive = await craft({ 'agentinfra.db': damaged }, [['agentinfra.db', damaged]]);
    const dataDir = join(dir, 'data-damaged');
    mkdirSync(dataDir);
    const result = await restore(archive, dataDir);
    expect(result.stderr).toContain(`${archive} holds an agentinfra.db that is not a sound SQLite database (`);
    expect(result.code).toBe(1);
    expect(readdirSync(dataDir)).toEqual([]);
  });

  // Probe: a 1 MB archive whose manifest.json was padded to 250 MB (about 230 to 1 gzipped, under tar's own limit of
  // 1000) was read whole into memory (about 900 MB peak), and restored when the padding was whitespace.
  it('refuses a manifest that inflates far more than any backup’s, while reading it', async () => {
    const unpacked = mkdtempSync(join(dir, 'padded-'));
    const manifest = {
      format: 'agentinfra-backup/1',
      version: '0.0.0',
      created_at: new Date().toISOString(),
      migrations: {},
      counts: {},
      files: [{ path: 'agentinfra.db', bytes: database.length, sha256: sha256(database) }],
      master_key_included: false,
    };
    writeFileSync(
      join(unpacked, 'manifest.json'),
      Buffer.concat([Buffer.from(JSON.stringify(manifest)), Buffer.alloc(64 * 1024 * 1024, ' ')]),
    );
    writeFileSync(join(unpacked, 'agentinfra.db'), database);
    const archive = join(dir, 'padded.tar.gz');
    await tar.create({ gzip: { level: 1 }, file: archive, cwd: unpacked, portable: true }, ['manifest.json', 'agentinfra.db']);
    const dataDir = join(dir, 'data-padded');
    const result = await restore(archive, dataDir);
    expect(result.stderr).toBe(
      `agentinfra: ${archive} is not an agentinfra backup: its manifest.json inflates more than 64 times, which no backup's does.\n`,
    );
    expect(result.code).toBe(1);
    expect(existsSync(dataDir)).toBe(false);
  });

  // Backups hold the empty folder of a blob deleted while they copied it.
  it('restores the same database and blob when everything is listed, past an empty folder of the blob store', async () => {
    const small = randomBytes(16);
    const archive = await craft({ 'agentinfra.db': database, 'blobs/objects/ab/abcd': small }, [
      ['agentinfra.db', database],
      ['blobs', null],
      ['blobs/objects', null],
      ['blobs/objects/ab', null],
      ['blobs/objects/e1', null],
      ['blobs/objects/ab/abcd', small],
    ]);
    const dataDir = join(dir, 'data-ok');
    const result = await restore(archive, dataDir);
    expect(result.stderr).not.toContain('agentinfra:');
    expect(result.code).toBe(0);
    expect(readFileSync(join(dataDir, 'agentinfra.db')).equals(database)).toBe(true);
    expect(readFileSync(join(dataDir, 'blobs/objects/ab/abcd')).equals(small)).toBe(true);
  });
});
