import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, coreConfigSchema, coreEnvBindings, parseConfigSection, readConfigSources, readRawConfig } from './config.js';
import { newMasterKey } from './services/secret-box.js';

describe('configuration', () => {
  const dir = mkdtempSync(join(tmpdir(), 'agentinfra-config-'));
  const masterKey = newMasterKey();

  it('reads the file, then lets the environment win', () => {
    const file = join(dir, 'a.json');
    writeFileSync(file, JSON.stringify({ port: 9000, bridgeKey: 'bk_from_file_0123456789', masterKey, http: { bodyLimitBytes: 4096 } }));
    const { raw } = readRawConfig({ file, env: { AGENTINFRA_PORT: '0', AGENTINFRA_RATE_LIMIT_PER_MINUTE: '5' } });
    const config = parseConfigSection({ schema: coreConfigSchema, value: raw });
    expect(config.port).toBe(0);
    expect(config.http).toMatchObject({ bodyLimitBytes: 4096, rateLimitPerMinute: 5 });
    expect(config.dataDir).toBe('./.agentinfra');
  });

  it('starts on defaults from the environment alone', () => {
    const { raw, fileFound } = readRawConfig({
      file: join(dir, 'missing.json'),
      env: { AGENTINFRA_BRIDGE_KEY: 'bk_env_only_0123456789', AGENTINFRA_MASTER_KEY: masterKey },
    });
    expect(fileFound).toBe(false);
    const config = parseConfigSection({ schema: coreConfigSchema, value: raw });
    expect(config).toMatchObject({ port: 8787, host: '127.0.0.1', embedder: { provider: 'wordvec' } });
  });

  it('names the config path and the variable of every invalid key', () => {
    const { raw } = readRawConfig({ file: join(dir, 'missing.json'), env: { AGENTINFRA_PORT: '70000' } });
    expect(() => parseConfigSection({ schema: coreConfigSchema, value: raw, bindings: coreEnvBindings })).toThrow(ConfigError);
    try {
      parseConfigSection({ schema: coreConfigSchema, value: raw, bindings: coreEnvBindings });
    } catch (error) {
      expect((error as Error).message).toContain('bridgeKey');
      expect((error as Error).message).toContain('AGENTINFRA_BRIDGE_KEY');
      expect((error as Error).message).toContain('port');
    }
  });

  it('refuses a PostgreSQL pool of one connection, which would deadlock migrations on their own lock', () => {
    const { raw } = readRawConfig({
      file: join(dir, 'missing.json'),
      env: { AGENTINFRA_BRIDGE_KEY: 'bk_env_only_0123456789', AGENTINFRA_MASTER_KEY: masterKey, AGENTINFRA_DATABASE_POOL_MAX: '1' },
    });
    expect(() => parseConfigSection({ schema: coreConfigSchema, value: raw, bindings: coreEnvBindings })).toThrow(
      /AGENTINFRA_DATABASE_POOL_MAX[\s\S]*at least 2|at least 2[\s\S]*AGENTINFRA_DATABASE_POOL_MAX/,
    );
  });

  // Review: `AGENTINFRA_DATABASE_URL='postgres://u:pw@[bad/x' agentinfra migrate` passed the prefix check here and
  // failed in the PostgreSQL adapter with a raw zod issue array instead of a configuration error.
  // The same for the Redis URL, which had the same prefix-only check.
  it.each([
    ['an unparsable host', 'AGENTINFRA_DATABASE_URL', 'databaseUrl', 'postgres://u:s3cretpw@[bad/x'],
    ['a port above 65535', 'AGENTINFRA_DATABASE_URL', 'databaseUrl', 'postgres://u:s3cretpw@db.example:99999/agentinfra'],
    ['a malformed percent-encoding', 'AGENTINFRA_DATABASE_URL', 'databaseUrl', 'postgresql://u:s3cretpw%zz@db.example/agentinfra'],
    ['another scheme', 'AGENTINFRA_DATABASE_URL', 'databaseUrl', 'mysql://u:s3cretpw@db.example/agentinfra'],
    ['an unparsable host', 'AGENTINFRA_REDIS_URL', 'redisUrl', 'redis://u:s3cretpw@[bad/x'],
    ['a port above 65535', 'AGENTINFRA_REDIS_URL', 'redisUrl', 'rediss://:s3cretpw@cache.example:70000/0'],
  ])('reports a URL with %s in %s as one configuration problem without the password', (_name, variable, key, url) => {
    const { raw, sources } = readConfigSources({
      file: join(dir, 'missing.json'),
      env: { AGENTINFRA_BRIDGE_KEY: 'bk_env_only_0123456789', AGENTINFRA_MASTER_KEY: masterKey, [variable]: url },
    });
    let error: unknown;
    try {
      parseConfigSection({ schema: coreConfigSchema, value: raw, sources });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const message = (error as Error).message;
    expect(message).toContain('Invalid configuration (1 problem):');
    expect(message).toContain(`${key} from ${variable}: `);
    expect(message).not.toContain('s3cretpw');
  });

  it('accepts well-formed PostgreSQL URLs', () => {
    for (const url of ['postgres://u:p%40ss@db.example:5432/agentinfra', 'postgresql://postgres@127.0.0.1/test?sslmode=require']) {
      const { raw } = readRawConfig({
        file: join(dir, 'missing.json'),
        env: { AGENTINFRA_BRIDGE_KEY: 'bk_env_only_0123456789', AGENTINFRA_MASTER_KEY: masterKey, AGENTINFRA_DATABASE_URL: url },
      });
      expect(parseConfigSection({ schema: coreConfigSchema, value: raw, bindings: coreEnvBindings }).databaseUrl).toBe(url);
    }
  });

  it('refuses unparsable files and variables', () => {
    const file = join(dir, 'bad.json');
    writeFileSync(file, '{ nope');
    expect(() => readRawConfig({ file, env: {} })).toThrow(/not valid JSON/);
    expect(() => readRawConfig({ file: join(dir, 'missing.json'), env: { AGENTINFRA_PORT: 'eighty' } })).toThrow(/AGENTINFRA_PORT/);
  });

  it('refuses a config path it cannot read as a configuration error naming the file', () => {
    expect(() => readRawConfig({ file: dir, env: {} })).toThrow(`${dir}: cannot be read (EISDIR).`);
  });

  // Review: JSON.parse's message quoted the text around the error, `..."sterKey": c2VjcmV0c2"... is not valid JSON`.
  it.each([
    ['a bare value', '{\n  "masterKey": c2VjcmV0c2VjcmV0,\n}', 'line 2, column 16 (invalid symbol)'],
    ['a trailing comma', '{\n  "masterKey": "c2VjcmV0c2VjcmV0",\n}', 'line 3, column 1 (property name expected)'],
    ['a missing comma', '{ "masterKey": "c2VjcmV0c2VjcmV0"\n  "port": 1 }', 'line 2, column 3 (comma expected)'],
    ['a bad escape', '{ "masterKey": "c2VjcmV0\\c2VjcmV0" }', 'line 1, column 16 (invalid escape character)'],
    ['a missing end', '{ "masterKey": "c2VjcmV0c2VjcmV0', 'line 1, column 16 (unexpected end of string)'],
    ['text after the object', '{ "port": 1 }\nc2VjcmV0c2VjcmV0', 'line 2, column 1 (invalid symbol)'],
  ])('says where a file with %s is not valid JSON, never quoting it', (_name, text, where) => {
    const file = join(dir, 'secret.json');
    writeFileSync(file, text);
    expect(() => readRawConfig({ file, env: {} })).toThrow(`${file}: not valid JSON at ${where}.`);
    expect(() => readRawConfig({ file, env: {} })).not.toThrow(/c2Vj|Key"/);
  });
});
