import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createSqliteDatabase } from './database.js';
import { lockFileOf } from './file-lock.js';

// Review: keys were made file names by replacing other characters with '-', so `a:b` and `a.b` shared one lock
// file (a section of one waited on the other, itself inside it: a deadlock) and a 300-character key could not be
// opened at all (SQLITE_CANTOPEN).
describe('SQLite exclusive sections and their lock files', () => {
  const folder = mkdtempSync(join(tmpdir(), 'agentinfra-file-lock-'));
  const db = createSqliteDatabase({ filename: join(folder, 'test.db') });

  afterAll(async () => {
    await db.close();
    rmSync(folder, { recursive: true, force: true });
  });

  it('names a lock file for each key, readable and short', () => {
    expect(lockFileOf('/d/agentinfra.db', 'agentinfra:migrations')).toMatch(
      /^\/d\/agentinfra\.db\.agentinfra-migrations-[0-9a-f]{12}\.lock$/,
    );
    expect(lockFileOf('/d/x.db', 'a:b')).not.toBe(lockFileOf('/d/x.db', 'a.b'));
    expect(basename(lockFileOf('/d/x.db', 'k'.repeat(300))).length).toBeLessThan(80);
  });

  it('runs a section of one key inside a section of a key that reads alike, and takes a very long key', async () => {
    const nested = db.exclusive({ key: 'a:b' }, () => db.exclusive({ key: 'a.b' }, async () => 'inner'));
    await expect(nested).resolves.toBe('inner');
    await expect(db.exclusive({ key: 'k'.repeat(300) }, async () => 'long')).resolves.toBe('long');
  });
});
