import { randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { freshKeys, runCli } from './serve-process.test-support.js';

const mode = (path: string) => statSync(path).mode & 0o777;

// Walkthrough: `agentinfra restore` left the files 0600 and the data directory 0700 as documented, but made
// `restored/blobs`, `restored/blobs/objects/84`, … 0755.
describe('agentinfra restore', () => {
  it('makes every folder of the restored tree 0700 and every file 0600', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'agentinfra-restore-modes-'));
    const keys = {
      ...freshKeys(),
      AGENTINFRA_SMTP_PORT: '0',
      AGENTINFRA_ACME_HTTP_PORT: '0',
    };
    const source = join(dir, 'data');
    expect((await runCli(['migrate'], { cwd: dir, env: { ...keys, AGENTINFRA_DATA_DIR: source } })).code).toBe(0);
    // Blob objects as the blob store lays them out, in folders readable by others on the backed-up host.
    for (const prefix of ['84', 'c1']) {
      const folder = join(source, 'blobs', 'objects', prefix);
      mkdirSync(folder, { recursive: true });
      writeFileSync(join(folder, `${prefix}${randomBytes(8).toString('hex')}`), randomBytes(64), { mode: 0o644 });
    }
    for (const folder of ['blobs', 'blobs/objects', 'blobs/objects/84', 'blobs/objects/c1']) chmodSync(join(source, folder), 0o755);
    const archive = join(dir, 'backup.tar.gz');
    expect((await runCli(['backup', '--out', archive], { cwd: dir, env: { ...keys, AGENTINFRA_DATA_DIR: source } })).code).toBe(0);

    const restored = join(dir, 'restored');
    const result = await runCli(['restore', '--from', archive], { cwd: dir, env: { ...keys, AGENTINFRA_DATA_DIR: restored } });
    expect(result.stderr).not.toContain('agentinfra:');
    expect(result.code).toBe(0);
    const found = readdirSync(restored, { recursive: true, withFileTypes: true }).map((entry) => {
      const path = join(entry.parentPath, entry.name);
      return { path: relative(restored, path), mode: mode(path), expected: entry.isDirectory() ? 0o700 : 0o600 };
    });
    expect(found.map((entry) => entry.path)).toEqual(
      expect.arrayContaining(['agentinfra.db', 'blobs', 'blobs/objects', 'blobs/objects/84', 'blobs/objects/c1']),
    );
    expect(found.filter((entry) => entry.mode !== entry.expected)).toEqual([]);
    expect(mode(restored)).toBe(0o700);
  }, 60_000);
});
