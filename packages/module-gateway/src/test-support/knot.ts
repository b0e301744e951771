import { randomBytes } from 'node:crypto';
import { Resolver } from 'node:dns/promises';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startProcess, type TestProcess, waitUntil } from './child-process.js';
import { freeDnsPort } from './free-port.js';

/** A Knot DNS server a test started on loopback, authoritative for one zone and taking TSIG-signed updates. */
export interface KnotServer {
  /** `127.0.0.1:<port>` (UDP and TCP). */
  server: string;
  zone: string;
  key: { name: string; algorithm: 'hmac-sha256'; secret: string };
  output(): string;
  stop(): Promise<void>;
}

/**
 * Starts Debian's `knotd` with a fresh config: zone `zone` (SOA, NS, and
 * `* A 127.0.0.1` so every host resolves to loopback), updates allowed for
 * one generated hmac-sha256 key. Waits until the zone answers.
 */
export async function startKnot(options: { zone: string }): Promise<KnotServer> {
  const folder = await mkdtemp(join(tmpdir(), 'agentinfra-knot-'));
  const port = await freeDnsPort();
  const key = { name: 'agentinfra-test-update.', algorithm: 'hmac-sha256' as const, secret: randomBytes(32).toString('base64') };
  const zone = options.zone.replace(/\.$/, '');
  await writeFile(
    join(folder, `${zone}.zone`),
    [
      `$ORIGIN ${zone}.`,
      '$TTL 60',
      `@ SOA ns.${zone}. hostmaster.${zone}. 1 3600 600 86400 60`,
      `@ NS ns.${zone}.`,
      'ns A 127.0.0.1',
      '* A 127.0.0.1',
      '',
    ].join('\n'),
  );
  await writeFile(
    join(folder, 'knot.conf'),
    [
      'server:',
      `    rundir: "${folder}"`,
      `    listen: 127.0.0.1@${port}`,
      'log:',
      '  - target: stderr',
      '    any: info',
      'database:',
      `    storage: "${folder}"`,
      'control:',
      `    listen: "${join(folder, 'knot.sock')}"`,
      'key:',
      `  - id: ${key.name}`,
      `    algorithm: ${key.algorithm}`,
      `    secret: ${key.secret}`,
      'acl:',
      '  - id: update',
      `    key: ${key.name}`,
      '    action: update',
      'zone:',
      `  - domain: ${zone}`,
      `    storage: "${folder}"`,
      `    file: "${zone}.zone"`,
      '    zonefile-sync: -1',
      '    journal-content: none',
      '    acl: update',
      '',
    ].join('\n'),
  );
  const child: TestProcess = await startProcess('knotd', ['-c', join(folder, 'knot.conf')]);
  const resolver = new Resolver({ timeout: 500, tries: 1 });
  resolver.setServers([`127.0.0.1:${port}`]);
  try {
    await waitUntil(async () => (await resolver.resolveSoa(zone)).serial >= 1, {
      timeoutMs: 15_000,
      describe: () => `knotd did not serve ${zone} on 127.0.0.1:${port}:\n${child.output()}`,
    });
  } catch (error) {
    await child.stop();
    await rm(folder, { recursive: true, force: true });
    throw error;
  }
  return {
    server: `127.0.0.1:${port}`,
    zone,
    key,
    output: () => child.output(),
    async stop() {
      await child.stop();
      await rm(folder, { recursive: true, force: true });
    },
  };
}
