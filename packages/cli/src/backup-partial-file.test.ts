import { randomBytes } from 'node:crypto';
import { lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as tar from 'tar';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshKeys, runCli, runCliInProcess } from './serve-process.test-support.js';

/**
 * Preloaded into the backup process (`--require`): before each `fs.write` /
 * `fs.writev` (the calls file write streams make, tar's included) to a file
 * under WATCH_DIR, records that file's path and mode into WRITE_LOG, once
 * per open file. So the mode is read while the archive is being written,
 * whatever the timing. The umask is fixed at 022, under which a file made
 * with the default 0666 is readable by everyone.
 */
const WRITE_HOOK = `
const fs = require('node:fs');
process.umask(0o022);
const seen = new Set();
const record = (fd) => {
  let path;
  try {
    path = fs.readlinkSync('/proc/self/fd/' + fd);
  } catch {
    return;
  }
  if (!path.startsWith(process.env.WATCH_DIR + '/') || seen.has(fd + ' ' + path)) return;
  seen.add(fd + ' ' + path);
  fs.appendFileSync(process.env.WRITE_LOG, JSON.stringify({ path, mode: fs.fstatSync(fd).mode & 0o777 }) + '\\n');
};
for (const name of ['write', 'writev']) {
  const original = fs[name];
  fs[name] = function (fd, ...rest) {
    record(fd);
    return original.call(this, fd, ...rest);
  };
}
require('node:module').syncBuiltinESMExports();
`;

// Probe on a real server: `backup` wrote FILE.partial with tar's default mode (0644 under umask 022) and made it 0600
// only once complete, so another user could open it meanwhile and keep reading; and it followed a FILE.partial that
// was a symbolic link, overwriting its target and leaving FILE a link to it.
// The write hook needs a process of its own; the other backups run in this one (runCliInProcess).
describe.runIf(process.platform === 'linux')('agentinfra backup writes its archive where no one else can read it', () => {
  const dir = mkdtempSync(join(tmpdir(), 'agentinfra-backup-partial-'));
  const keys = { ...freshKeys(), AGENTINFRA_DATA_DIR: join(dir, 'data') };

  beforeAll(async () => {
    expect((await runCliInProcess(['migrate'], { cwd: dir, env: keys })).code).toBe(0);
    // Incompressible blobs: the archive takes many writes.
    for (const prefix of ['0a', '1b', '2c', '3d']) {
      mkdirSync(join(dir, 'data', 'blobs', 'objects', prefix), { recursive: true });
      writeFileSync(join(dir, 'data', 'blobs', 'objects', prefix, `${prefix}${randomBytes(8).toString('hex')}`), randomBytes(256 * 1024));
    }
  }, 60_000);

  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('has the archive mode 0600 from its first write, the manifest its first entry', async () => {
    const outDir = join(dir, 'out');
    mkdirSync(outDir);
    const hook = join(dir, 'write-hook.cjs');
    writeFileSync(hook, WRITE_HOOK);
    const log = join(dir, 'writes.jsonl');
    writeFileSync(log, '');
    const out = join(outDir, 'b.tar.gz');
    const result = await runCli(['backup', '--out', out], {
      cwd: dir,
      env: { ...keys, NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --require ${hook}`, WATCH_DIR: outDir, WRITE_LOG: log },
    });
    expect(result.stderr).not.toContain('agentinfra:');
    expect(result.code).toBe(0);
    const writes = readFileSync(log, 'utf8')
      .trim()
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as { path: string; mode: number });
    expect(writes.length).toBeGreaterThan(0);
    expect(writes.filter((write) => write.mode !== 0o600)).toEqual([]);
    expect(lstatSync(out).mode & 0o777).toBe(0o600);
    expect(readdirSync(outDir)).toEqual(['b.tar.gz']);
    const entries: string[] = [];
    await tar.list({ file: out, onReadEntry: (entry) => void entries.push(entry.path) });
    expect(entries[0]).toBe('manifest.json');
    expect(entries).toContain('agentinfra.db');
  }, 60_000);

  it('never writes through FILE.partial: a symbolic link there and its target stay as they are', async () => {
    const outDir = join(dir, 'linked');
    mkdirSync(outDir);
    const victim = join(dir, 'victim.txt');
    writeFileSync(victim, 'the victim’s notes\n');
    const out = join(outDir, 'b6.tar.gz');
    symlinkSync(victim, `${out}.partial`);
    const result = await runCliInProcess(['backup', '--out', out], { cwd: dir, env: keys });
    expect(result.stderr).not.toContain('agentinfra:');
    expect(result.code).toBe(0);
    expect(readFileSync(victim, 'utf8')).toBe('the victim’s notes\n');
    expect(lstatSync(out).isFile()).toBe(true);
    expect(lstatSync(out).mode & 0o777).toBe(0o600);
    expect(lstatSync(`${out}.partial`).isSymbolicLink()).toBe(true);
    const entries: string[] = [];
    await tar.list({ file: out, onReadEntry: (entry) => void entries.push(entry.path) });
    expect(entries[0]).toBe('manifest.json');
  }, 60_000);

  it('leaves a FILE.partial a crashed run left alone, and refuses FILE when it is a dangling symbolic link', async () => {
    const outDir = join(dir, 'stale');
    mkdirSync(outDir);
    const out = join(outDir, 'b.tar.gz');
    writeFileSync(`${out}.partial`, 'half an archive');
    const made = await runCliInProcess(['backup', '--out', out], { cwd: dir, env: keys });
    expect(made.code).toBe(0);
    expect(readFileSync(`${out}.partial`, 'utf8')).toBe('half an archive');
    expect(lstatSync(out).isFile()).toBe(true);

    const dangling = join(outDir, 'dangling.tar.gz');
    symlinkSync(join(dir, 'nowhere.tar.gz'), dangling);
    const refused = await runCliInProcess(['backup', '--out', dangling], { cwd: dir, env: keys });
    expect(refused.stderr).toContain('already exists');
    expect(refused.code).toBe(2);
    expect(lstatSync(dangling).isSymbolicLink()).toBe(true);
    expect(readdirSync(dir)).not.toContain('nowhere.tar.gz');
  }, 60_000);
});
