import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../..', import.meta.url));

/** Every `*.test.ts` under `dir` (relative to the workspace root), skipping `node_modules` and `dist`. */
function testFiles(dir: string): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'node_modules' || entry.name === 'dist' ? [] : testFiles(path);
    return entry.isFile() && entry.name.endsWith('.test.ts') ? [path] : [];
  });
}

// Test files share their worker's modules (vitest.config.ts): one that replaced a module with
// vi.mock there would hand the modules it loaded under the mock to the files after it.
describe('test files that mock a module', () => {
  it('are all listed to run isolated in vitest.config.ts', () => {
    const config = readFileSync(join(root, 'vitest.config.ts'), 'utf8');
    const isolated = /const MOCKING_MODULES = \[([^\]]*)\]/.exec(config)?.[1] ?? '';
    const mocking = [...testFiles('packages'), ...testFiles('examples')].filter((file) =>
      /\bvi\.(mock|doMock)\(/.test(readFileSync(join(root, file), 'utf8')),
    );
    expect(mocking.length).toBeGreaterThan(0);
    expect(mocking.filter((file) => !isolated.includes(`'${file}'`))).toEqual([]);
  });
});
