import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../../', import.meta.url));

/** The project's own Markdown files (not dependencies, builds or bench/RESULTS.md). */
function markdownFiles(directory: string): string[] {
  return readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    const path = join(directory, entry.name);
    if (entry.isDirectory()) return ['node_modules', 'dist', '.git', 'bench'].includes(entry.name) ? [] : markdownFiles(path);
    return entry.name.endsWith('.md') ? [path] : [];
  });
}

/**
 * The curl commands of a Markdown text, each on one line: backslash
 * continuations joined, and a quoted body that spans lines read to its
 * closing quote.
 */
function curlCommands(text: string): Array<{ line: number; command: string }> {
  const lines = text.split('\n');
  const commands: Array<{ line: number; command: string }> = [];
  for (let i = 0; i < lines.length; i += 1) {
    if (!/(^|\s)curl\s/.test(lines[i] ?? '')) continue;
    const start = i;
    let command = lines[i] ?? '';
    while ((command.trimEnd().endsWith('\\') || (command.match(/'/g) ?? []).length % 2 === 1) && i + 1 < lines.length) {
      i += 1;
      command = `${command.trimEnd().replace(/\\$/, '')} ${lines[i]}`;
    }
    commands.push({ line: start + 1, command });
  }
  return commands;
}

// #11 made the API answer 415 to a body sent without `content-type: application/json`,
// and curl's -d sends application/x-www-form-urlencoded: examples without the header failed as written.
describe('curl examples in the Markdown docs', () => {
  it('send JSON bodies with content-type: application/json', () => {
    const missing: string[] = [];
    let withBody = 0;
    for (const file of markdownFiles(root)) {
      for (const { line, command } of curlCommands(readFileSync(file, 'utf8'))) {
        if (!/\s(-d|--data(-raw|-binary)?)\s/.test(command)) continue;
        withBody += 1;
        if (!/content-type:\s*application\/json/i.test(command)) missing.push(`${relative(root, file)}:${line}`);
      }
    }
    expect(withBody).toBeGreaterThan(20);
    expect(missing).toEqual([]);
  });

  // The root README sets BASE=…/functions/v1; module READMEs that prefixed it again sent every call to a 404.
  it('reach routes as $BASE/<module>/…, with BASE the /functions/v1 prefix of the root README', () => {
    const doubled: string[] = [];
    let routed = 0;
    for (const file of markdownFiles(root)) {
      for (const { line, command } of curlCommands(readFileSync(file, 'utf8'))) {
        if (/\$\{?BASE\}?\/agent-/.test(command)) routed += 1;
        if (/\$\{?BASE\}?\/functions\/v1/.test(command)) doubled.push(`${relative(root, file)}:${line}`);
      }
    }
    expect(routed).toBeGreaterThan(30);
    expect(doubled).toEqual([]);
  });
});
