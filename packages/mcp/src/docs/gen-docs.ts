import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { buildToolCatalog } from '../tool-catalog.js';
import { documentedModules } from './documented-modules.js';
import { renderToolsMarkdown, replaceToolsSection } from './tools-markdown.js';

/** Rewrites the generated tool reference in docs/mcp.md (`pnpm --filter @agentinfra/mcp gen-docs`). */
const file = fileURLToPath(new URL('../../../../docs/mcp.md', import.meta.url));
const current = readFileSync(file, 'utf8');
const next = replaceToolsSection(current, renderToolsMarkdown(buildToolCatalog(documentedModules)));
if (next !== current) writeFileSync(file, next);
process.stdout.write(`${next === current ? 'unchanged' : 'updated'}: docs/mcp.md\n`);
