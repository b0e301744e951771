import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startProcess, type TestProcess, waitUntil } from './child-process.js';
import { freeTcpPort } from './free-port.js';
import { httpsGet } from './https-get.js';
import { pebbleTlsMaterial } from './pebble-tls.js';

/** A pebble ACME server a test started on loopback. */
export interface PebbleServer {
  /** `https://127.0.0.1:<port>/dir`. */
  directoryUrl: string;
  /** `https://127.0.0.1:<port>` of the management interface. */
  managementUrl: string;
  /** File of the CA behind pebble's own HTTPS certificate (removed by `stop`). */
  caFile: string;
  caPem: string;
  /** PEM of pebble's current issuing root (it changes on every start). */
  root(): Promise<string>;
  /** Revocation status of a certificate by serial (lowercase hex, no leading zeros): `Valid` or `Revoked`. */
  certStatus(serial: string): Promise<{ Status: string; Reason?: number } | null>;
  /**
   * Stops pebble and starts it again on the same ports with the same
   * config: a CA that has forgotten every account, order and certificate
   * (pebble keeps them in memory), as a CA whose database was reset.
   */
  restart(): Promise<void>;
  output(): string;
  stop(): Promise<void>;
}

/** Options of {@link startPebble}. */
export interface PebbleOptions {
  /** `PEBBLE_VA_ALWAYS_VALID=1`: every challenge passes without validation. */
  alwaysValid: boolean;
  /** `-dnsserver`: where pebble's validation looks names up (`host:port`). */
  dnsServer: string;
  /** Port pebble connects to for HTTP-01 validation (the gateway's challenge listener). */
  httpPort?: number;
  /** External account binding keys (kid → base64url HMAC key); set makes EAB required. */
  eabKeys?: Record<string, string>;
}

/**
 * Starts Debian's `pebble` on free loopback ports with a fresh config and
 * TLS files, with `PEBBLE_VA_NOSLEEP=1` and `PEBBLE_WFE_NONCEREJECT=0`,
 * and waits until its directory answers.
 */
export async function startPebble(options: PebbleOptions): Promise<PebbleServer> {
  const tls = await pebbleTlsMaterial();
  const folder = await mkdtemp(join(tmpdir(), 'agentinfra-pebble-'));
  const caFile = join(folder, 'ca.pem');
  await writeFile(caFile, tls.caPem);
  await writeFile(join(folder, 'cert.pem'), tls.certPem);
  await writeFile(join(folder, 'key.pem'), tls.keyPem, { mode: 0o600 });
  const [acmePort, managementPort, tlsPort] = [await freeTcpPort(), await freeTcpPort(), await freeTcpPort()];
  const config = {
    pebble: {
      listenAddress: `127.0.0.1:${acmePort}`,
      managementListenAddress: `127.0.0.1:${managementPort}`,
      certificate: join(folder, 'cert.pem'),
      privateKey: join(folder, 'key.pem'),
      httpPort: options.httpPort ?? (await freeTcpPort()),
      tlsPort,
      ocspResponderURL: '',
      externalAccountBindingRequired: options.eabKeys !== undefined,
      ...(options.eabKeys ? { externalAccountMACKeys: options.eabKeys } : {}),
    },
  };
  const configFile = join(folder, 'pebble-config.json');
  await writeFile(configFile, JSON.stringify(config, null, 2));
  const env: NodeJS.ProcessEnv = { PEBBLE_VA_NOSLEEP: '1', PEBBLE_WFE_NONCEREJECT: '0' };
  if (options.alwaysValid) env.PEBBLE_VA_ALWAYS_VALID = '1';
  const directoryUrl = `https://127.0.0.1:${acmePort}/dir`;
  const managementUrl = `https://127.0.0.1:${managementPort}`;
  const launch = async (): Promise<TestProcess> => {
    const started = await startProcess('pebble', ['-config', configFile, '-dnsserver', options.dnsServer, '-strict=false'], env);
    try {
      await waitUntil(async () => (await httpsGet(directoryUrl, tls.caPem)).status === 200, {
        timeoutMs: 15_000,
        describe: () => `pebble did not answer at ${directoryUrl}:\n${started.output()}`,
      });
      return started;
    } catch (error) {
      await started.stop();
      throw error;
    }
  };
  let child: TestProcess;
  try {
    child = await launch();
  } catch (error) {
    await rm(folder, { recursive: true, force: true });
    throw error;
  }
  return {
    directoryUrl,
    managementUrl,
    caFile,
    caPem: tls.caPem,
    async root() {
      const response = await httpsGet(`${managementUrl}/roots/0`, tls.caPem);
      if (response.status !== 200) throw new Error(`pebble /roots/0 answered ${response.status}`);
      return response.body;
    },
    async certStatus(serial) {
      const response = await httpsGet(`${managementUrl}/cert-status-by-serial/${serial}`, tls.caPem);
      if (response.status === 404) return null;
      return JSON.parse(response.body) as { Status: string; Reason?: number };
    },
    async restart() {
      await child.stop();
      child = await launch();
    },
    output: () => child.output(),
    async stop() {
      await child.stop();
      await rm(folder, { recursive: true, force: true });
    },
  };
}
