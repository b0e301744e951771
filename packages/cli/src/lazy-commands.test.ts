import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { freshKeys, runCli } from './serve-process.test-support.js';

/** Workspace code a command that serves or reads the database loads, and `--help` must not. */
const HEAVY = /\/packages\/(core|modules|module-[a-z]+|mcp|console|adapter-[a-z0-9]+)\//;

/**
 * Runs the CLI with an ESM load hook (through `NODE_OPTIONS=--import`) that
 * records every module URL it loads, and fails the loading of URLs matching
 * `broken` (a broken install).
 */
async function loadedBy(
  args: string[],
  broken?: RegExp,
  env: NodeJS.ProcessEnv = {},
): Promise<{ code: number | null; stderr: string; loaded: string[] }> {
  const dir = mkdtempSync(join(tmpdir(), 'agentinfra-lazy-'));
  const log = join(dir, 'loaded.txt');
  writeFileSync(log, '');
  const hooks = join(dir, 'hooks.mjs');
  const fail = broken ? `  if (${broken}.test(url)) throw new Error('cannot read ' + url);\n` : '';
  writeFileSync(
    hooks,
    `import { appendFileSync } from 'node:fs';\nexport async function load(url, context, next) {\n  appendFileSync(${JSON.stringify(log)}, url + '\\n');\n${fail}  return next(url, context);\n}\n`,
  );
  const register = join(dir, 'register.mjs');
  writeFileSync(register, `import { register } from 'node:module';\nregister(${JSON.stringify(pathToFileURL(hooks).href)});\n`);
  try {
    const { code, stderr } = await runCli(args, { cwd: dir, env: { ...env, NODE_OPTIONS: `--import=${pathToFileURL(register).href}` } });
    return { code, stderr, loaded: readFileSync(log, 'utf8').split('\n').filter(Boolean) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

// `source <(agentinfra completion bash)` runs in every new shell, and MCP
// clients launch `agentinfra mcp`: loading every module first cost ~1.5 s.
describe('agentinfra loads a command’s code only when that command runs', () => {
  it('answers --help, completion and a usage error without loading the modules, adapters or the MCP SDK', async () => {
    for (const args of [['--help'], ['completion', 'bash'], ['mcp', '--url', 'not-a-url']]) {
      const { code, loaded } = await loadedBy(args);
      expect(code, args.join(' ')).toBe(args[0] === 'mcp' ? 2 : 0);
      expect(loaded.some((url) => url.endsWith('/packages/cli/dist/program.js'))).toBe(true);
      expect(
        loaded.filter((url) => HEAVY.test(url)),
        args.join(' '),
      ).toEqual([]);
    }
  }, 60_000);

  it('loads them for a command that reads the configuration', async () => {
    const { code, loaded } = await loadedBy(['-c', 'missing.json', 'audit', 'verify']);
    expect(code).toBe(2);
    expect(loaded.some((url) => /\/packages\/core\/dist\//.test(url))).toBe(true);
  }, 30_000);

  // The MCP SDK was about a third of every command's start-up.
  it('migrates without loading the surfaces only serve mounts (MCP, console, docs page)', async () => {
    const { code, loaded } = await loadedBy(['migrate'], undefined, { ...freshKeys(), AGENTINFRA_DATA_DIR: 'data' });
    expect(code).toBe(0);
    expect(loaded.some((url) => /\/packages\/module-memory\/dist\//.test(url))).toBe(true);
    expect(loaded.filter((url) => /\/packages\/(mcp|console|docs-page)\/|@modelcontextprotocol/.test(url))).toEqual([]);
  }, 60_000);

  it('reports a command whose code cannot be loaded in one line, exit 1', async () => {
    const { code, stderr } = await loadedBy(['-c', 'missing.json', 'audit', 'verify'], /\/packages\/core\/dist\/index\.js$/);
    expect(code).toBe(1);
    expect(stderr).toMatch(/^agentinfra: cannot read file:.*\/packages\/core\/dist\/index\.js\n$/);
  }, 30_000);
});
