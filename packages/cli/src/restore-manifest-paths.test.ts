import { createHash, randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import * as tar from 'tar';
import { describe, expect, it } from 'vitest';
import { freshKeys, runCliInProcess } from './serve-process.test-support.js';

const mode = (path: string) => statSync(path).mode & 0o777;
const sha256 = (data: Buffer | string) => createHash('sha256').update(data).digest('hex');
const entry = (path: string, data: Buffer | string) => ({ path, bytes: Buffer.byteLength(data), sha256: sha256(data) });

// Review: `restore` joined every manifest path to its staging folder, so an archive listing `../../notes.txt`
// (with that file's checksum) restored "successfully" with exit 0, chmodded the outside file to 0600 and left an
// empty data directory.
describe('agentinfra restore refuses manifest paths no backup writes', () => {
  const keys = {
    ...freshKeys(),
  };

  /**
   * A gzipped tar of a manifest listing `listed` and the `packed` files
   * (which it also holds), each with its right size and checksum.
   */
  async function craft(dir: string, listed: Array<{ path: string; bytes: number; sha256: string }>, packed: Record<string, Buffer>) {
    const unpacked = mkdtempSync(join(dir, 'unpacked-'));
    for (const [path, data] of Object.entries(packed)) {
      mkdirSync(dirname(join(unpacked, path)), { recursive: true });
      writeFileSync(join(unpacked, path), data);
    }
    const manifest = {
      format: 'agentinfra-backup/1',
      version: '0.0.0',
      created_at: new Date().toISOString(),
      migrations: {},
      counts: {},
      files: [...Object.entries(packed).map(([path, data]) => entry(path, data)), ...listed],
      master_key_included: false,
    };
    writeFileSync(join(unpacked, 'manifest.json'), JSON.stringify(manifest));
    const archive = join(dir, `crafted-${randomBytes(4).toString('hex')}.tar.gz`);
    await tar.create({ gzip: true, file: archive, cwd: unpacked }, ['manifest.json', ...Object.keys(packed)]);
    return archive;
  }

  /** `agentinfra restore` run in this process: every case here is refused by the manifest checks, which no process boundary changes. */
  async function restore(dir: string, archive: string, dataDir: string) {
    return runCliInProcess(['restore', '--from', archive], { cwd: dir, env: { ...keys, AGENTINFRA_DATA_DIR: dataDir } });
  }

  // The data directory is dir/site/data, so restore stages in dir/site/.agentinfra-restore-…, two levels below dir.
  it.each([
    ['a path with ..', () => '../../notes.txt', false],
    ['a path with .. under blobs/objects', () => 'blobs/objects/../../../../notes.txt', true],
    ['an absolute path', (dir: string) => join(dir, 'notes.txt'), true],
  ])('refuses %s with exit 1: the outside file keeps its mode, no data directory', async (_name, pathOf, withDatabase) => {
    const dir = mkdtempSync(join(tmpdir(), 'agentinfra-restore-paths-'));
    const notes = join(dir, 'notes.txt');
    const content = 'the operator’s notes\n';
    writeFileSync(notes, content);
    chmodSync(notes, 0o644);
    const dataDir = join(dir, 'site', 'data');
    const listed = pathOf(dir);
    const archive = await craft(dir, [entry(listed, content)], withDatabase ? { 'agentinfra.db': randomBytes(32) } : {});

    const result = await restore(dir, archive, dataDir);
    expect(result.stderr).toContain(JSON.stringify(listed));
    expect(result.stderr).toContain('refusing to restore');
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(result.code).toBe(1);
    expect(mode(notes)).toBe(0o644);
    expect(existsSync(dataDir)).toBe(false);
    expect(readdirSync(join(dir, 'site'))).toEqual([]);
  });

  it.each([
    ['a backslash', 'blobs\\objects\\ab'],
    ['a file besides agentinfra.db and blobs/objects', 'config.json'],
  ])('refuses %s with exit 1, even with the file in the archive', async (_name, path) => {
    const dir = mkdtempSync(join(tmpdir(), 'agentinfra-restore-paths-'));
    const dataDir = join(dir, 'data');
    const archive = await craft(dir, [], { 'agentinfra.db': randomBytes(32), [path]: randomBytes(8) });
    const result = await restore(dir, archive, dataDir);
    expect(result.stderr).toContain('refusing to restore');
    expect(result.code).toBe(1);
    expect(existsSync(dataDir)).toBe(false);
  });

  it('refuses a manifest that does not list agentinfra.db, with exit 1', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'agentinfra-restore-paths-'));
    const dataDir = join(dir, 'data');
    const archive = await craft(dir, [], { 'blobs/objects/ab/abcd': randomBytes(16) });
    const result = await restore(dir, archive, dataDir);
    expect(result.stderr).toContain('must list agentinfra.db');
    expect(result.code).toBe(1);
    expect(existsSync(dataDir)).toBe(false);
  });
});
