import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ConfigError } from '../config.js';
import { newMasterKey } from '../services/secret-box.js';
import { type AnyModule, defineModule } from './module.js';
import { loadServerConfig } from './server-config.js';

const dir = mkdtempSync(join(tmpdir(), 'agentinfra-server-config-'));
const masterKey = newMasterKey();
const bridgeKey = 'bk_from_the_file_0123456789';

/** A module with a config section and one variable, as real modules declare them. */
const widgets = defineModule({
  name: 'widgets',
  ports: [],
  migrations: {},
  permissions: [],
  config: {
    key: 'widgets',
    schema: z.object({ size: z.number().int().max(10).default(1), label: z.string().min(3).default('box') }),
    env: [{ name: 'AGENTINFRA_WIDGETS_SIZE', path: ['size'], type: 'integer' }],
  },
  service: () => ({}),
  routes: [],
}) as AnyModule;

function writeConfig(name: string, values: Record<string, unknown>): string {
  const file = join(dir, name);
  writeFileSync(file, JSON.stringify(values));
  return file;
}

/** The ConfigError that loading throws. */
function loadError(options: Parameters<typeof loadServerConfig>[0]): ConfigError {
  try {
    loadServerConfig(options);
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error('loadServerConfig accepted the configuration');
}

// #13: only the first bad variable was reported, and always as "Invalid configuration in …/agentinfra.config.json".
describe('loadServerConfig error report', () => {
  it('lists every bad variable, file key and module setting at once, each under its own source', () => {
    const file = writeConfig('mixed.json', { bridgeKey, masterKey, host: '', widgets: { label: 'x' } });
    const error = loadError({
      modules: [widgets],
      file,
      env: {
        AGENTINFRA_PORT: 'eighty',
        AGENTINFRA_RATE_LIMIT_PER_MINUTE: 'lots',
        AGENTINFRA_DATABASE_POOL_MAX: '1',
        AGENTINFRA_WIDGETS_SIZE: '11',
      },
    });
    const lines = error.message.split('\n');
    expect(lines[0]).toBe('Invalid configuration (6 problems):');
    expect(error.message).not.toContain(`Invalid configuration in`);
    expect(lines).toContainEqual(expect.stringMatching(/^ {2}- port from AGENTINFRA_PORT: expected an integer, got "eighty"$/));
    expect(lines).toContainEqual(
      expect.stringMatching(/^ {2}- http\.rateLimitPerMinute from AGENTINFRA_RATE_LIMIT_PER_MINUTE: expected an integer/),
    );
    expect(lines).toContainEqual(expect.stringMatching(/^ {2}- database\.poolMax from AGENTINFRA_DATABASE_POOL_MAX: .*at least 2/));
    expect(lines).toContainEqual(expect.stringMatching(/^ {2}- widgets\.size from AGENTINFRA_WIDGETS_SIZE: /));
    expect(lines).toContain(`  - host in ${file}: ${error.problems.find((problem) => problem.path === 'host')?.message}`);
    expect(lines).toContainEqual(expect.stringMatching(new RegExp(`^ {2}- widgets\\.label in ${file}: `)));
    expect(error.problems.map((problem) => [problem.path, problem.source.kind])).toEqual(
      expect.arrayContaining([
        ['port', 'env'],
        ['http.rateLimitPerMinute', 'env'],
        ['database.poolMax', 'env'],
        ['host', 'file'],
        ['widgets.size', 'env'],
        ['widgets.label', 'file'],
      ]),
    );
    expect(error.configFile).toEqual({ path: file, found: true });
  });

  it('says a required setting is not set and where it can be set, and that no file was found', () => {
    const file = join(dir, 'absent.json');
    const error = loadError({ modules: [], file, env: { AGENTINFRA_MASTER_KEY: masterKey } });
    expect(error.message).toMatch(
      new RegExp(`^Invalid configuration \\(1 problem\\):\\n {2}- bridgeKey not set \\(set it in ${file} or AGENTINFRA_BRIDGE_KEY\\): `),
    );
    expect(error.configFile).toEqual({ path: file, found: false });
  });

  it('names the variable when it overrides a bad file value, and never repeats a string value', () => {
    const file = writeConfig('override.json', { bridgeKey, masterKey: 'file-value-not-a-key' });
    const error = loadError({ modules: [], file, env: { AGENTINFRA_MASTER_KEY: 'short-secret-from-env' } });
    expect(error.problems).toEqual([
      expect.objectContaining({ path: 'masterKey', source: { kind: 'env', variable: 'AGENTINFRA_MASTER_KEY' } }),
    ]);
    expect(error.message).not.toContain('short-secret-from-env');
    expect(error.message).not.toContain('file-value-not-a-key');
  });

  it('loads a valid file and environment', () => {
    const file = writeConfig('good.json', { bridgeKey, masterKey, widgets: { label: 'crate' } });
    const config = loadServerConfig({ modules: [widgets], file, env: { AGENTINFRA_WIDGETS_SIZE: '7' } });
    expect(config.modules.widgets).toEqual({ size: 7, label: 'crate' });
    expect(config.fileFound).toBe(true);
  });
});

// Docs walkthrough: `{"bogusKey": 1, "http": {"rateLimitPerMinut": 5}}` started a server on the defaults without a word.
describe('loadServerConfig unknown keys', () => {
  it('refuses keys of the config file that no schema declares, at any depth, naming each', () => {
    const file = writeConfig('typos.json', {
      bridgeKey,
      masterKey,
      bogusKey: 1,
      http: { rateLimitPerMinut: 5 },
      embedder: { provider: 'wordvec', model: 'x' },
      widgets: { size: 2, colour: 'red' },
    });
    const error = loadError({ modules: [widgets], file, env: {} });
    expect(error.problems.map((problem) => [problem.path, problem.source.kind])).toEqual([
      ['bogusKey', 'file'],
      ['http.rateLimitPerMinut', 'file'],
      ['embedder.model', 'file'],
      ['widgets.colour', 'file'],
    ]);
    expect(error.message).toContain(`  - http.rateLimitPerMinut in ${file}: unknown key`);
  });

  it('accepts every declared key, module sections and union options included', () => {
    const file = writeConfig('known.json', {
      bridgeKey,
      masterKey,
      http: { rateLimitPerMinute: 5 },
      embedder: { provider: 'openai', baseUrl: 'http://127.0.0.1:11434', model: 'nomic-embed-text', dimensions: 768 },
      widgets: { size: 2 },
    });
    expect(loadServerConfig({ modules: [widgets], file, env: {} }).core.http.rateLimitPerMinute).toBe(5);
  });

  // Review: the union option came from the file alone, so the environment's choice made the file's keys "unknown".
  it('reads a union option chosen by the environment over the file', () => {
    const file = writeConfig('env-union.json', {
      bridgeKey,
      masterKey,
      embedder: { provider: 'wordvec', baseUrl: 'http://127.0.0.1:11434', model: 'nomic-embed-text' },
    });
    const config = loadServerConfig({ modules: [widgets], file, env: { AGENTINFRA_EMBEDDER: 'openai' } });
    expect(config.core.embedder).toMatchObject({ provider: 'openai', model: 'nomic-embed-text' });
  });
});
