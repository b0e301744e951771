import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from './serve-process.test-support.js';

describe('agentinfra init on a path where no config can be written', () => {
  // Review: `agentinfra -c /proc/x/y.json init` never returned: Node's recursive mkdir retries forever where the
  // parent exists but takes no new folder.
  it.runIf(existsSync('/proc/self'))(
    'stops at once with exit 2 naming the folder, under /proc',
    async () => {
      const result = await runCli(['-c', '/proc/x/y.json', 'init'], { cwd: tmpdir(), timeoutMs: 15_000 });
      expect(result.stderr).toBe('agentinfra: cannot create the folder /proc/x for /proc/x/y.json: /proc takes no new folders.\n');
      expect(result.code).toBe(2);
    },
    20_000,
  );

  it('stops with exit 2 in one line when a part of the path is a file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'agentinfra-init-path-'));
    writeFileSync(join(dir, 'file'), '');
    const file = join(dir, 'file', 'sub', 'agentinfra.config.json');
    const result = await runCli(['-c', file, 'init'], { cwd: dir, timeoutMs: 15_000 });
    expect(result.stderr).toBe(
      `agentinfra: cannot create the folder ${join(dir, 'file', 'sub')} for ${file}: a part of the path is not a folder.\n`,
    );
    expect(result.code).toBe(2);
  }, 20_000);
});
