import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { binPath, freshKeys } from './serve-process.test-support.js';

// Review: `agentinfra migrate | true` died on an unhandled EPIPE with a stack trace.
describe('agentinfra output to a closed pipe', () => {
  it('finishes quietly when the reader of stdout is gone', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'agentinfra-epipe-'));
    const child = spawn(process.execPath, [binPath, 'migrate'], {
      cwd: dir,
      env: {
        ...process.env,
        AGENTINFRA_DATA_DIR: join(dir, 'data'),
        ...freshKeys(),
      },
    });
    // The reader goes away before the first line is written, as `true` does.
    child.stdout.destroy();
    let stderr = '';
    child.stderr.on('data', (chunk) => (stderr += chunk));
    const code = await new Promise<number | null>((resolve) => child.on('close', (exitCode) => resolve(exitCode)));
    expect(stderr).not.toContain('EPIPE');
    expect(code).toBe(0);
  }, 30_000);
});
