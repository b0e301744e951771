import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { defaultModules } from '@agentinfra/modules';
import { buildToolCatalog } from '../tool-catalog.js';
import { renderToolsMarkdown, replaceToolsSection } from './tools-markdown.js';

/** Rewrites the generated tool reference in docs/mcp.md (`pnpm --filter @agentinfra/mcp gen-docs`). */
const file = fileURLToPath(new URL('../../../../docs/mcp.md', import.meta.url));
const current = readFileSync(file, 'utf8');
const next = replaceToolsSection(current, renderToolsMarkdown(buildToolCatalog(defaultModules)));
if (next !== current) writeFileSync(file, next);
process.stdout.write(`${next === current ? 'unchanged' : 'updated'}: docs/mcp.md\n`);
