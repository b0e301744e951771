import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { freshKeys, runCliInProcess, startServe } from './serve-process.test-support.js';

// Walkthrough: `migrate --reembed` ran beside a `serve` on the same SQLite file, which went on writing and
// searching vectors of the old embedder meanwhile (docs/operations.md says to stop the servers first). `serve` runs as a
// process of its own, the migrations in this one (runCliInProcess): the lock is another process's either way.
describe('agentinfra migrate --reembed beside a running serve (SQLite)', () => {
  it('refuses with one line, exit 2, while serve runs; plain migrate still runs; --reembed runs once it stopped', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'agentinfra-reembed-lock-'));
    const env = { ...freshKeys(), AGENTINFRA_DATA_DIR: join(dir, 'data'), AGENTINFRA_ACME_HTTP_PORT: '0', AGENTINFRA_SMTP_PORT: '0' };
    const server = await startServe(['--port', '0'], { cwd: dir, env });
    const database = join(dir, 'data', 'agentinfra.db');
    try {
      const refused = await runCliInProcess(['migrate', '--reembed'], { cwd: dir, env });
      expect(refused.stderr).toBe(
        `agentinfra: migrate --reembed: a server is running on ${database} (it holds ${database}.serve-lock); ` +
          'stop it first, then run this again.\n',
      );
      expect(refused.code).toBe(2);
      // Migrations only add, and a server keeps serving on a database migrated beside it (docs/operations.md, "Upgrading").
      const plain = await runCliInProcess(['migrate'], { cwd: dir, env });
      expect(plain.code, plain.stderr).toBe(0);
      expect((await fetch(`${server.url}/ready`)).status).toBe(200);
    } finally {
      expect(await server.stop()).toBe(0);
    }
    const reembedded = await runCliInProcess(['migrate', '--reembed'], { cwd: dir, env });
    expect(reembedded.code, reembedded.stderr).toBe(0);
    expect(reembedded.stdout).toContain('re-embedded semantic memories');
  }, 60_000);
});
