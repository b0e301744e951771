import { startProcess, type TestProcess, waitUntil } from './child-process.js';
import { freeDnsPort, freeTcpPort } from './free-port.js';

/** Debian's `pebble-challtestsrv`: a mock DNS server whose records are set over HTTP. */
export interface ChallTestServer {
  /** `127.0.0.1:<port>` of its DNS server (UDP and TCP). */
  dnsServer: string;
  /** Adds a TXT value at `name` (no trailing dot needed). */
  setTxt(name: string, value: string): Promise<void>;
  /** Removes every TXT value at `name`. */
  clearTxt(name: string): Promise<void>;
  /** Answers A queries for `name` with `addresses` (instead of the default 127.0.0.1). */
  setA(name: string, addresses: readonly string[]): Promise<void>;
  output(): string;
  stop(): Promise<void>;
}

/**
 * Starts `pebble-challtestsrv` with only its DNS server (A queries answer
 * 127.0.0.1, no AAAA) and management API on free loopback ports.
 */
export async function startChallTestServer(): Promise<ChallTestServer> {
  const dnsPort = await freeDnsPort();
  const managementPort = await freeTcpPort();
  const child: TestProcess = await startProcess('pebble-challtestsrv', [
    '-dns01',
    `127.0.0.1:${dnsPort}`,
    '-management',
    `127.0.0.1:${managementPort}`,
    '-http01',
    '',
    '-https01',
    '',
    '-tlsalpn01',
    '',
    '-defaultIPv4',
    '127.0.0.1',
    '-defaultIPv6',
    '',
  ]);
  const management = `http://127.0.0.1:${managementPort}`;
  const post = async (path: string, body: unknown) => {
    const response = await fetch(`${management}${path}`, { method: 'POST', body: JSON.stringify(body) });
    if (!response.ok) throw new Error(`challtestsrv ${path} answered ${response.status}: ${await response.text()}`);
  };
  const fqdn = (name: string) => (name.endsWith('.') ? name : `${name}.`);
  try {
    await waitUntil(async () => (await fetch(`${management}/clear-txt`, { method: 'POST', body: '{"host":"probe.invalid."}' })).ok, {
      timeoutMs: 10_000,
      describe: () => `pebble-challtestsrv did not answer at ${management}:\n${child.output()}`,
    });
  } catch (error) {
    await child.stop();
    throw error;
  }
  return {
    dnsServer: `127.0.0.1:${dnsPort}`,
    setTxt: (name, value) => post('/set-txt', { host: fqdn(name), value }),
    clearTxt: (name) => post('/clear-txt', { host: fqdn(name) }),
    setA: (name, addresses) => post('/add-a', { host: fqdn(name), addresses }),
    output: () => child.output(),
    stop: () => child.stop(),
  };
}
