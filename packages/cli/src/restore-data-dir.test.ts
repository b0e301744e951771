import { chmodSync, chownSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { freshKeys, runCliInProcess } from './serve-process.test-support.js';

const restoredFiles = (dir: string) => readdirSync(dir).sort();

// Review: restore unpacked next to the data directory, then removed it and renamed the unpacked folder in its
// place: it failed with raw errno text on an empty mount point (EBUSY), a data directory whose parent the user cannot
// write (EACCES) and a symbolic link (ENOTDIR), and as root it replaced a directory owned by the service's user.
describe('agentinfra restore into a data directory that exists', () => {
  const dir = mkdtempSync(join(tmpdir(), 'agentinfra-restore-dir-'));
  const keys = { ...freshKeys(), AGENTINFRA_SMTP_PORT: '0', AGENTINFRA_ACME_HTTP_PORT: '0' };
  const archive = join(dir, 'backup.tar.gz');
  // Every command runs in this process (runCliInProcess): what restore does to the folders is the point.
  const restore = (dataDir: string, from = archive) =>
    runCliInProcess(['restore', '--from', from], { cwd: dir, env: { ...keys, AGENTINFRA_DATA_DIR: dataDir } });

  beforeAll(async () => {
    const source = { ...keys, AGENTINFRA_DATA_DIR: join(dir, 'source') };
    expect((await runCliInProcess(['migrate'], { cwd: dir, env: source })).code).toBe(0);
    expect((await runCliInProcess(['backup', '--out', archive], { cwd: dir, env: source })).code).toBe(0);
  }, 60_000);

  it('restores through a symbolic link to an empty folder, which stays a link', async () => {
    const real = join(dir, 'real');
    mkdirSync(real);
    const link = join(dir, 'link');
    symlinkSync(real, link);
    const result = await restore(link);
    expect(result.stderr).not.toContain('agentinfra:');
    expect(result.code).toBe(0);
    expect(restoredFiles(real)).toEqual(['agentinfra.db']);
    expect(readdirSync(dir)).toContain('link');
    expect(statSync(link).ino).toBe(statSync(real).ino);
  });

  // As root (CI containers) the read-only parent does not stop the old way; the kept inode and mode show it then.
  it('restores into an empty folder whose parent is read-only, keeping the folder with its mode', async () => {
    const parent = join(dir, 'mount');
    const dataDir = join(parent, 'data');
    mkdirSync(dataDir, { recursive: true, mode: 0o750 });
    chmodSync(dataDir, 0o750);
    const inode = statSync(dataDir).ino;
    chmodSync(parent, 0o555);
    try {
      const result = await restore(dataDir);
      expect(result.stderr).not.toContain('agentinfra:');
      expect(result.code).toBe(0);
    } finally {
      chmodSync(parent, 0o755);
    }
    expect(readdirSync(parent)).toEqual(['data']);
    expect(statSync(dataDir).ino).toBe(inode);
    expect(statSync(dataDir).mode & 0o777).toBe(0o750);
    expect(restoredFiles(dataDir)).toEqual(['agentinfra.db']);
    expect(statSync(join(dataDir, 'agentinfra.db')).mode & 0o777).toBe(0o600);
  });

  it.runIf(process.getuid?.() === 0)('run as root, gives the restored files the data directory’s owner', async () => {
    const dataDir = join(dir, 'owned');
    mkdirSync(dataDir, { mode: 0o700 });
    chownSync(dataDir, 65534, 65534);
    const result = await restore(dataDir);
    expect(result.code).toBe(0);
    expect(statSync(dataDir).uid).toBe(65534);
    expect(statSync(join(dataDir, 'agentinfra.db'))).toMatchObject({ uid: 65534, gid: 65534 });
  });

  it('leaves an existing folder empty when the archive cannot be unpacked', async () => {
    const truncated = join(dir, 'truncated.tar.gz');
    writeFileSync(truncated, readFileSync(archive).subarray(0, 200));
    const dataDir = join(dir, 'empty');
    mkdirSync(dataDir);
    const result = await restore(dataDir, truncated);
    expect(result.stderr).toMatch(/^agentinfra: .*truncated\.tar\.gz could not be unpacked: [^\n]+\n$/);
    expect(result.code).toBe(1);
    expect(readdirSync(dataDir)).toEqual([]);
  });

  it('names the folder an interrupted restore left, in restore and in the commands that open the database', async () => {
    const dataDir = join(dir, 'interrupted');
    mkdirSync(join(dataDir, '.agentinfra-restore-AbC123'), { recursive: true });
    writeFileSync(join(dataDir, '.agentinfra-restore-AbC123', 'agentinfra.db'), 'half of it');
    const again = await restore(dataDir);
    const migrate = await runCliInProcess(['migrate'], { cwd: dir, env: { ...keys, AGENTINFRA_DATA_DIR: dataDir } });
    expect(again.stderr).toBe(
      `agentinfra: the data directory ${dataDir} holds .agentinfra-restore-AbC123, left by an interrupted restore: empty the directory ` +
        'and run the restore again.\n',
    );
    expect(again.code).toBe(2);
    expect(migrate.stderr).toContain(`the data directory ${dataDir} holds .agentinfra-restore-AbC123, left by an interrupted`);
    expect(migrate.code).toBe(2);
    expect(readdirSync(dataDir)).toEqual(['.agentinfra-restore-AbC123']);
  });
});
