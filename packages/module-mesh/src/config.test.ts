import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, loadServerConfig, newCredential, newMasterKey } from '@agentinfra/core';
import { describe, expect, it } from 'vitest';
import { meshConfigSchema } from './config.js';
import { meshModule } from './module.js';

const baseEnv = { AGENTINFRA_BRIDGE_KEY: newCredential('bk_'), AGENTINFRA_MASTER_KEY: newMasterKey() };
const noFile = join(tmpdir(), 'agentinfra-mesh-no-such-config.json');

describe('mesh.prefix', () => {
  // Legacy IPv4 notations: `010.000.000.000/8` was read as octal and handed out 8.0.0.1, routing public space into the tunnel.
  it.each(['010.000.000.000/8', '0144.0.0.0/10', '0x64.0x40.0.0/10', '1681915904/10', '100.64.0/10', '100.064.0.0/10', 'fe80::%eth0/64'])(
    'refuses %s in the schema',
    (prefix) => {
      expect(meshConfigSchema.safeParse({ prefix }).success).toBe(false);
    },
  );

  it.each(['100.64.0.0/10', '10.0.0.0/8', 'fd7a:115c:a1e0::/48'])('accepts %s in the schema', (prefix) => {
    expect(meshConfigSchema.parse({ prefix }).prefix).toBe(prefix);
  });

  it('refuses the server configuration at startup, naming mesh.prefix and AGENTINFRA_MESH_PREFIX', () => {
    const load = () =>
      loadServerConfig({ modules: [meshModule], file: noFile, env: { ...baseEnv, AGENTINFRA_MESH_PREFIX: '010.000.000.000/8' } });
    expect(load).toThrow(ConfigError);
    expect(load).toThrow(/Invalid configuration \(1 problem\)/);
    expect(load).toThrow(/mesh\.prefix from AGENTINFRA_MESH_PREFIX: must be an IPv4 prefix in plain dotted decimal/);
    expect(() =>
      loadServerConfig({ modules: [meshModule], file: noFile, env: { ...baseEnv, AGENTINFRA_MESH_PREFIX: '10.0.0.0/8' } }),
    ).not.toThrow();
  });
});

describe('mesh.maxAclsPerPair', () => {
  it('defaults to 256 rules per pair and reads AGENTINFRA_MESH_MAX_ACLS_PER_PAIR', () => {
    expect(meshConfigSchema.parse({}).maxAclsPerPair).toBe(256);
    const config = loadServerConfig({ modules: [meshModule], file: noFile, env: { ...baseEnv, AGENTINFRA_MESH_MAX_ACLS_PER_PAIR: '12' } });
    expect(config.modules['agent-mesh']).toMatchObject({ maxAclsPerPair: 12 });
  });

  it.each([0, 131_072, 2.5])('refuses %s in the schema', (maxAclsPerPair) => {
    expect(meshConfigSchema.safeParse({ maxAclsPerPair }).success).toBe(false);
  });
});
