import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SqlDatabase } from '@agentinfra/core';
import { sqlDatabases } from '@agentinfra/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolvePeerEndpoints, runWgConfig } from './host/index.js';
import { configPeers, type MeshTestServer, randomPublicKey, startMeshTestServer } from './test-support/mesh-test-server.js';
import { createNamespaceLab, type LabHost, type NamespaceLab } from './test-support/network-namespaces.js';
import { runCommand } from './test-support/processes.js';
import { wireguardGate } from './test-support/wireguard-environment.js';

// issue #5: end to end over a real WireGuard tunnel between two network namespaces (userspace wireguard-go).
const runs = wireguardGate({
  suite: 'the WireGuard tunnel test',
  commands: ['wg', 'wg-quick', 'wireguard-go', 'nft', 'ip', 'ping', 'bash'],
  privileged: true,
});

/** Listens on the given ports of `address` and answers each connection with `port <n>`; prints `ready` once listening. */
const TCP_SERVER = `
const net = require('node:net');
const [address, ...ports] = process.argv.slice(1);
let pending = ports.length;
for (const port of ports) {
  net.createServer((socket) => socket.end('port ' + port)).listen(Number(port), address, () => { if (--pending === 0) console.log('ready'); });
}`;

/** Connects to address:port and prints what it receives, or `timeout` after 1.5 s. */
const TCP_CLIENT = `
const net = require('node:net');
const [address, port] = process.argv.slice(1);
const socket = net.connect({ host: address, port: Number(port) });
let data = '';
const timer = setTimeout(() => { console.log('timeout'); process.exit(0); }, 1500);
socket.on('data', (chunk) => { data += chunk; });
socket.on('end', () => { clearTimeout(timer); console.log(data); process.exit(0); });
socket.on('error', (error) => { clearTimeout(timer); console.log('error ' + error.code); process.exit(0); });`;

describe.runIf(runs).each(sqlDatabases())('a real WireGuard mesh from /wg_config on $name', ({ create }) => {
  let t: MeshTestServer;
  let db: SqlDatabase;
  let cleanup: () => Promise<void>;
  let lab: NamespaceLab;
  let dir: string;
  const hosts = {} as Record<'alice' | 'bob', { host: LabHost; key: string; conf: string; address: string; port: number }>;

  const fetchConfig = async (agent: 'alice' | 'bob', endpoint?: string) => {
    const { host, key, conf, port } = hosts[agent];
    return runWgConfig({
      url: t.server.url,
      key: t.keys[agent],
      privateKeyFile: key,
      out: conf,
      ...(endpoint === undefined ? {} : { endpoint: `${host.underlay}:${port}` }),
      log: () => undefined,
    });
  };

  /** Pings `address` from `host` until one reply comes back or `seconds` pass. */
  const pingable = async (host: LabHost, address: string, seconds: number): Promise<boolean> => {
    const deadline = Date.now() + seconds * 1000;
    do {
      const ok = await lab
        .exec(host, 'ping', ['-c', '1', '-W', '1', address])
        .then(() => true)
        .catch(() => false);
      if (ok) return true;
    } while (Date.now() < deadline);
    return false;
  };

  const tcp = (host: LabHost, address: string, port: number) =>
    lab.exec(host, process.execPath, ['-e', TCP_CLIENT, address, String(port)], { timeoutMs: 10_000 }).then((out) => out.trim());

  beforeAll(async () => {
    const fixture = await create();
    cleanup = fixture.cleanup;
    db = fixture.db;
    t = await startMeshTestServer({ db });
    dir = await mkdtemp(join(tmpdir(), 'agentinfra-wg-tunnel-'));
    lab = await createNamespaceLab();
    hosts.alice = { host: lab.a, key: join(dir, 'alice.key'), conf: join(dir, `${lab.a.iface}.conf`), address: '', port: 51820 };
    hosts.bob = { host: lab.b, key: join(dir, 'bob.key'), conf: join(dir, `${lab.b.iface}.conf`), address: '', port: 51821 };
    for (const agent of ['alice', 'bob'] as const) hosts[agent].address = (await fetchConfig(agent, 'register')).address as string;
    const acls = [
      { from_agent: 'alice', to_agent: 'bob', proto: 'tcp', port: 8080 },
      { from_agent: 'alice', to_agent: 'bob', proto: 'icmp', port: 0 },
    ];
    for (const acl of acls) expect((await t.mesh('acl/put', acl, 'bob')).status).toBe(200);
    for (const agent of ['alice', 'bob'] as const) {
      expect((await fetchConfig(agent)).peers).toBe(1);
      await lab.startWireguard(hosts[agent].host);
      await lab.applyConfig(hosts[agent].host, hosts[agent].conf);
    }
    const server = lab.spawn(lab.b, process.execPath, ['-e', TCP_SERVER, hosts.bob.address, '8080', '9090']);
    await new Promise<void>((resolve, reject) => {
      server.stdout?.on('data', (chunk: Buffer) => chunk.toString().includes('ready') && resolve());
      server.once('exit', (code) => reject(new Error(`the TCP server in ${lab.b.ns} exited with ${code}`)));
    });
  }, 60_000);

  afterAll(async () => {
    try {
      await lab?.cleanup();
    } finally {
      await t?.server.stop();
      await cleanup?.();
      if (dir) await rm(dir, { recursive: true, force: true });
    }
  });

  it('brings up interfaces whose keys are `wg pubkey` of the host keys and whose peers come from the config', async () => {
    const show = await lab.exec(lab.a, 'wg', ['show', lab.a.iface, 'dump']);
    const [iface, peer] = show
      .trim()
      .split('\n')
      .map((line) => line.split('\t'));
    const alicePublic = (await runCommand('wg', ['pubkey'], { input: await readFile(hosts.alice.key, 'utf8') })).trim();
    const bobPublic = (await runCommand('wg', ['pubkey'], { input: await readFile(hosts.bob.key, 'utf8') })).trim();
    expect(iface?.[1]).toBe(alicePublic);
    expect(iface?.[2]).toBe('51820');
    expect(peer?.slice(0, 4)).toEqual([
      bobPublic,
      configPeers(await readFile(hosts.alice.conf, 'utf8')).get('bob')?.PresharedKey,
      `${lab.b.underlay}:51821`,
      `${hosts.bob.address}/32`,
    ]);
  });

  it('pings across the mesh and reaches the allowed TCP port, but not a port outside the ACLs', async () => {
    expect(await pingable(lab.a, hosts.bob.address, 10)).toBe(true);
    expect(await tcp(lab.a, hosts.bob.address, 8080)).toBe('port 8080');
    expect(await tcp(lab.a, hosts.bob.address, 9090)).toBe('timeout');
    // alice may reach bob, not the other way round: bob's file has no Endpoint for alice, WireGuard learned it from her handshake.
    expect(configPeers(await readFile(hosts.bob.conf, 'utf8')).get('alice')?.Endpoint).toBeUndefined();
    const [, peer] = (await lab.exec(lab.b, 'wg', ['show', lab.b.iface, 'dump'])).trim().split('\n');
    expect(peer?.split('\t')[2]).toBe(`${lab.a.underlay}:51820`);
  });

  it('keeps working after /psk/rotate once both sides refreshed their config, and not with one side stale', async () => {
    const before = configPeers(await readFile(hosts.alice.conf, 'utf8')).get('bob')?.PresharedKey;
    const rotated = await t.mesh('psk/rotate', { a: 'alice', b: 'bob' }, 'alice');
    expect(rotated.status).toBe(200);

    expect((await fetchConfig('alice')).changed).toBe(true);
    const after = configPeers(await readFile(hosts.alice.conf, 'utf8')).get('bob')?.PresharedKey;
    expect(after).not.toBe(before);
    await lab.reloadConfig(lab.a, hosts.alice.conf);
    expect(await pingable(lab.a, hosts.bob.address, 2)).toBe(false);

    expect((await fetchConfig('bob')).changed).toBe(true);
    expect(configPeers(await readFile(hosts.bob.conf, 'utf8')).get('alice')?.PresharedKey).toBe(after);
    await lab.reloadConfig(lab.b, hosts.bob.conf);
    expect(await pingable(lab.a, hosts.bob.address, 15)).toBe(true);
    expect(await tcp(lab.a, hosts.bob.address, 8080)).toBe('port 8080');
    expect(await tcp(lab.a, hosts.bob.address, 9090)).toBe('timeout');
  }, 40_000);

  // `[fe80::1%nosuchif0]:51820` registered by one peer made `wg setconf` refuse the whole file of every agent reaching it.
  it('loads a config with a peer whose stored endpoint has a zone id: the Endpoint is left out, which `wg setconf` would refuse', async () => {
    const zoned = '[fe80::1%nosuchif0]:51820';
    const poisoned = `${await readFile(hosts.alice.conf, 'utf8')}\n[Peer]\n# mallory\nPublicKey = ${randomPublicKey()}\nAllowedIPs = 100.127.0.9/32\nEndpoint = ${zoned}\n`;
    // wg-quick takes only files named <interface>.conf.
    await mkdir(join(dir, 'poisoned'), { recursive: true });
    const poisonedFile = join(dir, 'poisoned', `${lab.a.iface}.conf`);
    await writeFile(poisonedFile, poisoned, { mode: 0o600 });
    await expect(lab.reloadConfig(lab.a, poisonedFile)).rejects.toThrow(/Configuration parsing error|Name or service not known/);
    // What `agentinfra wg-config` makes of the same text, should a server still hand it out.
    const checked = await resolvePeerEndpoints(poisoned);
    expect(checked.dropped).toEqual([{ peer: 'mallory', endpoint: zoned, reason: 'invalid' }]);
    await writeFile(poisonedFile, checked.text, { mode: 0o600 });
    await lab.reloadConfig(lab.a, poisonedFile);

    // A peer stored with a zone id (before the server refused them) in alice's file: it loads, the peer without endpoint.
    const mallory = await t.register('mallory', '192.0.2.66:51820');
    await db.knex('mesh_peers').where({ agent_id: 'mallory' }).update({ endpoint: zoned });
    expect((await t.mesh('acl/put', { from_agent: 'alice', to_agent: 'mallory', proto: 'tcp', port: 80 }, t.bridge)).status).toBe(200);
    expect((await fetchConfig('alice')).peers).toBe(2);
    await lab.reloadConfig(lab.a, hosts.alice.conf);
    const dump = (await lab.exec(lab.a, 'wg', ['show', lab.a.iface, 'dump'])).trim().split('\n').slice(1);
    const row = dump.map((line) => line.split('\t')).find((fields) => fields[0] === mallory.pubkey);
    expect(row?.[2]).toBe('(none)');
    expect(await pingable(lab.a, hosts.bob.address, 10)).toBe(true);
  }, 40_000);

  it('removes its nftables table with the PreDown hook', async () => {
    expect(await lab.exec(lab.b, 'nft', ['list', 'tables'])).toContain('inet agentinfra_mesh');
    await lab.runPreDown(lab.b, hosts.bob.conf);
    expect(await lab.exec(lab.b, 'nft', ['list', 'tables'])).not.toContain('agentinfra_mesh');
  });
});
