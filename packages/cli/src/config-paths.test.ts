import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { loadServerConfig } from '@agentinfra/core';
import { defaultModules } from '@agentinfra/modules';
import { describe, expect, it } from 'vitest';
import { anchorConfigFilePaths } from './config-paths.js';

const keys = { bridgeKey: `bk_${randomBytes(32).toString('base64url')}`, masterKey: randomBytes(32).toString('base64') };

/** Loads `values` written to a config file in a fresh folder, with `env` as the whole environment. */
function load(values: Record<string, unknown>, env: NodeJS.ProcessEnv = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'agentinfra-config-paths-'));
  const file = join(dir, 'agentinfra.config.json');
  writeFileSync(file, JSON.stringify({ ...keys, ...values }));
  const config = anchorConfigFilePaths(loadServerConfig({ modules: defaultModules, file, env }), defaultModules, env);
  return { dir, config };
}

// Operator walkthrough: `agentinfra -c /path/agentinfra.config.json backup` from another directory used
// `./.agentinfra` of the current directory, because init writes `dataDir: './.agentinfra'`.
describe('relative paths in the config file', () => {
  it("are taken from the config file's folder, whatever the current directory", () => {
    // A folder name the current directory does not hold: a `.agentinfra` there (`pnpm start` in this clone makes
    // one) would be a database this config once meant, which loading refuses to strand.
    const dataDir = `.agentinfra-${randomBytes(4).toString('hex')}`;
    const { dir, config } = load({
      dataDir: `./${dataDir}`,
      gateway: { caFile: 'pebble.pem' },
      postbox: { smtp: { tlsCertFile: 'tls/cert.pem', tlsKeyFile: '../keys/key.pem' } },
    });
    expect(config.core.dataDir).toBe(join(dir, dataDir));
    expect(config.modules['agent-gateway']).toMatchObject({ caFile: join(dir, 'pebble.pem') });
    expect(config.modules['agent-postbox']).toMatchObject({
      smtp: { tlsCertFile: join(dir, 'tls', 'cert.pem'), tlsKeyFile: resolve(dir, '..', 'keys', 'key.pem') },
    });
  });

  it('keep absolute paths as written', () => {
    const { config } = load({ dataDir: '/var/lib/agentinfra' });
    expect(config.core.dataDir).toBe('/var/lib/agentinfra');
  });

  it('from environment variables, and defaults, stay relative to the current directory', () => {
    const env = { AGENTINFRA_DATA_DIR: 'from-env', AGENTINFRA_ACME_CA_FILE: 'ca-from-env.pem' };
    const fromEnv = load({ dataDir: './.agentinfra', gateway: { caFile: 'pebble.pem' } }, env).config;
    expect(fromEnv.core.dataDir).toBe('from-env');
    expect(fromEnv.modules['agent-gateway']).toMatchObject({ caFile: 'ca-from-env.pem' });
    expect(load({}).config.core.dataDir).toBe('./.agentinfra');
  });
});
