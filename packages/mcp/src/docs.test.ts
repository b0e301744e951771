import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { defaultModules } from '@agentinfra/modules';
import { expect, it } from 'vitest';
import { renderToolsMarkdown, replaceToolsSection } from './docs/tools-markdown.js';
import { buildToolCatalog } from './tool-catalog.js';

it('docs/mcp.md lists the tools as the declarations make them (run `pnpm --filter @agentinfra/mcp gen-docs` when this fails) (#14)', () => {
  const document = readFileSync(fileURLToPath(new URL('../../../docs/mcp.md', import.meta.url)), 'utf8');
  expect(replaceToolsSection(document, renderToolsMarkdown(buildToolCatalog(defaultModules)))).toBe(document);
});
