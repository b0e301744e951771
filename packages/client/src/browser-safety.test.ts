import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const sourceDir = new URL('./', import.meta.url);

describe('what a browser bundle of the client gets', () => {
  it('has no static import of a Node built-in (only upload loads node:crypto and node:fs, when called)', () => {
    const files = readdirSync(sourceDir, { recursive: true, encoding: 'utf8' }).filter(
      (file) => file.endsWith('.ts') && !file.endsWith('.test.ts') && !file.startsWith('codegen') && !file.startsWith('test-support'),
    );
    expect(files).toContain('client.ts');
    for (const file of files)
      expect(readFileSync(new URL(file, sourceDir), 'utf8'), file).not.toMatch(
        /^import[^;]*from '(node:)?(fs|crypto|http|stream|path|os)'/m,
      );
  });
});
