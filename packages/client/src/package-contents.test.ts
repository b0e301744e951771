import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, posix } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const packageDir = fileURLToPath(new URL('..', import.meta.url));

// Regression: `"files": ["dist", "src"]` shipped src/*.test.ts and src/test-support/* in the tarball.
describe('what `pnpm pack` puts in @agentinfra/client (needs the build: `npx tsc -b`)', () => {
  let entries: string[];

  beforeAll(async () => {
    const destination = mkdtempSync(join(tmpdir(), 'client-pack-'));
    await run('pnpm', ['pack', '--pack-destination', destination], { cwd: packageDir });
    const [tarball] = readdirSync(destination);
    const { stdout } = await run('tar', ['tzf', join(destination, tarball as string)]);
    entries = stdout
      .split('\n')
      .filter(Boolean)
      .map((entry) => entry.replace(/^package\//, ''));
  }, 60_000);

  it('has no tests, test support or code generator', () => {
    expect(entries.filter((entry) => /\.test\.ts$|^src\/(test-support|codegen)\//.test(entry))).toEqual([]);
  });

  it('has the build, and every source its source maps name', () => {
    expect(entries).toEqual(expect.arrayContaining(['package.json', 'README.md', 'dist/index.js', 'dist/index.d.ts', 'src/index.ts']));
    const maps = entries.filter((entry) => entry.endsWith('.map'));
    expect(maps.length).toBeGreaterThan(0);
    for (const map of maps) {
      const { sources } = JSON.parse(readFileSync(join(packageDir, map), 'utf8')) as { sources: string[] };
      for (const source of sources) expect(entries, `${map} names ${source}`).toContain(posix.join(posix.dirname(map), source));
    }
  });
});
