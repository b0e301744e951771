import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, loadServerConfig, newCredential, newMasterKey } from '@agentinfra/core';
import { sqlDatabases } from '@agentinfra/testkit';
import { describe, expect, it } from 'vitest';
import { LETS_ENCRYPT_STAGING } from './config.js';
import { gatewayModule } from './module.js';
import { startGatewayTestServer } from './test-support/gateway-test-server.js';

const baseEnv = { AGENTINFRA_BRIDGE_KEY: newCredential('bk_'), AGENTINFRA_MASTER_KEY: newMasterKey() };
const noFile = join(tmpdir(), 'agentinfra-gateway-no-such-config.json');

describe('agent-gateway configuration (issue #8)', () => {
  it('reads the CONTRACT.md environment variables into the gateway section', () => {
    const config = loadServerConfig({
      modules: [gatewayModule],
      file: noFile,
      env: {
        ...baseEnv,
        AGENTINFRA_ACME_DIRECTORY_URL: 'https://127.0.0.1:14000/dir',
        AGENTINFRA_ACME_CA_FILE: '/etc/pebble/ca.pem',
        AGENTINFRA_ACME_EMAIL: 'ops@example.com',
        AGENTINFRA_ACME_CHALLENGE: 'dns-01',
        AGENTINFRA_ACME_HTTP_PORT: '8080',
        AGENTINFRA_DNS_SERVERS: '127.0.0.1:5353, [::1]:53',
        AGENTINFRA_ACME_EAB_KID: 'kid-1',
        AGENTINFRA_ACME_EAB_HMAC_KEY: 'aG1hYy1rZXk',
        AGENTINFRA_DNS01_RFC2136_SERVER: '192.0.2.53:53',
        AGENTINFRA_DNS01_RFC2136_KEY_NAME: 'acme-update.',
        AGENTINFRA_DNS01_RFC2136_KEY_SECRET: Buffer.alloc(32, 7).toString('base64'),
      },
    });
    expect(config.modules['agent-gateway']).toMatchObject({
      directoryUrl: 'https://127.0.0.1:14000/dir',
      caFile: '/etc/pebble/ca.pem',
      email: 'ops@example.com',
      challenge: 'dns-01',
      httpPort: 8080,
      dnsServers: ['127.0.0.1:5353', '[::1]:53'],
      eab: { kid: 'kid-1', hmacKey: 'aG1hYy1rZXk' },
      rfc2136: { server: '192.0.2.53:53', keyName: 'acme-update.', keyAlgorithm: 'hmac-sha256', ttl: 60 },
      keyType: 'ecdsa-p256',
    });
  });

  it('defaults to Let’s Encrypt staging, HTTP-01 on port 80 and the system resolvers', () => {
    const config = loadServerConfig({ modules: [gatewayModule], file: noFile, env: baseEnv });
    expect(config.modules['agent-gateway']).toMatchObject({
      directoryUrl: LETS_ENCRYPT_STAGING,
      challenge: 'http-01',
      httpPort: 80,
      dnsServers: [],
      claimTokenTtlDays: 7,
    });
  });

  it('names the path and the variable of a bad value, without echoing secrets', () => {
    const secret = 'dG9vLXNob3J0';
    const load = () =>
      loadServerConfig({
        modules: [gatewayModule],
        file: noFile,
        env: {
          ...baseEnv,
          AGENTINFRA_ACME_CHALLENGE: 'tls-alpn-01',
          AGENTINFRA_DNS01_RFC2136_SERVER: 'ns:53',
          AGENTINFRA_DNS01_RFC2136_KEY_NAME: 'k.',
          AGENTINFRA_DNS01_RFC2136_KEY_SECRET: secret,
        },
      });
    expect(load).toThrow(ConfigError);
    expect(load).toThrow(/gateway\.challenge.*AGENTINFRA_ACME_CHALLENGE/);
    expect(load).toThrow(/gateway\.rfc2136\.keySecret.*AGENTINFRA_DNS01_RFC2136_KEY_SECRET/);
    try {
      load();
    } catch (error) {
      expect(String(error)).not.toContain(secret);
    }
  });
});

describe.each(sqlDatabases())('agent-gateway start-up on $name (issue #8)', ({ create }) => {
  const start = async (gateway: Record<string, unknown>) => {
    const fixture = await create();
    try {
      const test = await startGatewayTestServer({ db: fixture.db, gateway });
      return { test, cleanup: fixture.cleanup };
    } catch (error) {
      await fixture.cleanup();
      throw error;
    }
  };

  it('refuses to start DNS-01 without a DNS provider', async () => {
    await expect(start({ challenge: 'dns-01', httpPort: 0 })).rejects.toThrow(/dns-01 but no DNS provider.*gateway\.rfc2136/);
  });

  it('refuses to start when the ACME CA file cannot be read', async () => {
    await expect(start({ caFile: join(tmpdir(), 'agentinfra-no-such-ca.pem'), httpPort: 0 })).rejects.toThrow(
      /AGENTINFRA_ACME_CA_FILE.*cannot be read/,
    );
  });

  it('binds the HTTP-01 listener where the API does when no httpHost is set', async () => {
    // Another address holds the port: a listener on all interfaces could not bind, one on the API's 127.0.0.1 can.
    const other = createServer();
    const port = await new Promise<number>((resolve) =>
      other.listen(0, '127.0.0.2', () => resolve((other.address() as { port: number }).port)),
    );
    try {
      const { test, cleanup } = await start({ httpPort: port });
      expect(test.server.kernel.config.host).toBe('127.0.0.1');
      expect(test.service.http01Port()).toBe(port);
      await test.server.stop();
      await cleanup();
    } finally {
      other.close();
    }
  });

  it('still starts when the HTTP-01 port is taken, without a listener', async () => {
    const blocker = createServer();
    const port = await new Promise<number>((resolve) =>
      blocker.listen(0, '127.0.0.1', () => resolve((blocker.address() as { port: number }).port)),
    );
    try {
      const { test, cleanup } = await start({ httpPort: port, httpHost: '127.0.0.1' });
      expect(test.service.http01Port()).toBeNull();
      expect((await test.gateway('/list', {}, 'bridge')).status).toBe(200);
      await test.server.stop();
      await cleanup();
    } finally {
      blocker.close();
    }
  });
});
