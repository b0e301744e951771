import { randomBytes } from 'node:crypto';
import type { SqlDatabase } from '@agentinfra/core';
import { sqlDatabases } from '@agentinfra/testkit';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  configPeers,
  configValues,
  type ManualClock,
  type MeshTestServer,
  manualClock,
  randomPublicKey,
  startMeshTestServer,
  type TestAgent,
} from './test-support/mesh-test-server.js';

const ISO_MS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const fieldsOf = (body: { error: { details?: { fields?: Array<{ path: string }> } } }) =>
  (body.error.details?.fields ?? []).map((field) => field.path);

describe.each(sqlDatabases())('agent-mesh over HTTP on $name', ({ create }) => {
  let t: MeshTestServer;
  let db: SqlDatabase;
  let cleanup: () => Promise<void>;
  let clock: ManualClock;

  beforeAll(async () => {
    const fixture = await create();
    db = fixture.db;
    cleanup = fixture.cleanup;
    clock = manualClock();
    t = await startMeshTestServer({ db, clock, listen: false });
  });

  afterAll(async () => {
    await t?.server.stop();
    await cleanup?.();
  });

  const peerCount = async () => Number(((await db.knex('mesh_peers').count({ n: '*' }).first()) as { n: number | string }).n);

  describe('/peer/register', () => {
    it('allocates an address from 100.64.0.0/10 once and keeps it when the agent re-registers', async () => {
      const first = await t.mesh(
        'peer/register',
        { agent_id: 'alice', pubkey: randomPublicKey(), endpoint: '198.51.100.1:51820' },
        'alice',
      );
      expect(first.status).toBe(200);
      expect(first.body).toEqual({
        agent_id: 'alice',
        address: expect.stringMatching(/^100\.(6[4-9]|[7-9]\d|1[01]\d|12[0-7])\.\d+\.\d+$/),
        registered_at: expect.stringMatching(ISO_MS),
      });
      clock.advance(5_000);
      const pubkey = randomPublicKey();
      const again = await t.mesh('peer/register', { pubkey, endpoint: 'alice.example.com:51821' }, 'alice');
      expect(again.status).toBe(200);
      expect(again.body).toEqual(first.body);
      const netmap = await t.mesh('netmap', {}, 'alice');
      expect(netmap.body.self).toMatchObject({
        agent_id: 'alice',
        address: first.body.address,
        pubkey,
        endpoint: 'alice.example.com:51821',
      });
    });

    it('acts for the device key’s agent without agent_id, and takes agent_id from the payload with the bridge key', async () => {
      const own = await t.mesh('peer/register', { pubkey: randomPublicKey(), endpoint: '[2001:db8::2]:51820' }, 'bob');
      expect(own.status).toBe(200);
      expect(own.body.agent_id).toBe('bob');
      const bridged = await t.mesh('peer/register', { agent_id: 'carol', pubkey: randomPublicKey(), endpoint: '10.1.2.3:4000' }, t.bridge);
      expect(bridged.status).toBe(200);
      expect(bridged.body.agent_id).toBe('carol');
      expect(new Set([own.body.address, bridged.body.address]).size).toBe(2);
    });

    it('refuses the bridge key without agent_id (400), another agent’s device key (403) and no credential (401)', async () => {
      const body = { pubkey: randomPublicKey(), endpoint: '10.0.0.9:51820' };
      const noAgent = await t.mesh('peer/register', body, t.bridge);
      expect(noAgent.status).toBe(400);
      expect(fieldsOf(noAgent.body)).toEqual(['agent_id']);
      const other = await t.mesh('peer/register', { ...body, agent_id: 'bob' }, 'alice');
      expect(other.status).toBe(403);
      expect(other.body.error.code).toBe('forbidden');
      const anonymous = await t.mesh('peer/register', { ...body, agent_id: 'alice' }, {});
      expect(anonymous.status).toBe(401);
    });

    // issue #5: malformed pubkeys (31/33 bytes, not base64) and endpoints (no port, port 0, 70000, spaces) are 400.
    it('refuses malformed public keys with 400 naming pubkey and changes nothing', async () => {
      const before = await peerCount();
      for (const pubkey of [
        randomBytes(31).toString('base64'),
        randomBytes(33).toString('base64'),
        'not base64 at all, not base64 at all, not!!',
        randomBytes(32).toString('base64url'),
        randomBytes(32).toString('base64').replace('=', ''),
        42,
        Buffer.alloc(32).toString('base64'),
      ]) {
        const response = await t.mesh('peer/register', { agent_id: 'dave', pubkey, endpoint: '10.0.0.4:51820' }, t.bridge);
        expect(response.status, String(pubkey)).toBe(400);
        expect(response.body.error.code).toBe('invalid_request');
        expect(fieldsOf(response.body)).toEqual(['pubkey']);
      }
      expect(await peerCount()).toBe(before);
    });

    it('refuses malformed endpoints with 400 naming endpoint and changes nothing', async () => {
      const before = await peerCount();
      for (const endpoint of [
        '10.0.0.4',
        'host.example.com',
        '10.0.0.4:0',
        '10.0.0.4:70000',
        'my host:51820',
        '10.0.0.4 :51820',
        '2001:db8::1:51820',
        '',
      ]) {
        const response = await t.mesh('peer/register', { agent_id: 'dave', pubkey: randomPublicKey(), endpoint }, t.bridge);
        expect(response.status, endpoint).toBe(400);
        expect(fieldsOf(response.body)).toEqual(['endpoint']);
      }
      expect(await peerCount()).toBe(before);
    });

    // Zone ids: `[fe80::1%nosuchif0]:51820` was stored and handed to every agent reaching the peer, and `wg setconf` refused their whole files.
    it('refuses IPv6 endpoints with a zone id (also percent-encoded) with 400 naming endpoint, and legacy IPv4 notations', async () => {
      const before = await peerCount();
      for (const endpoint of [
        '[fe80::1%eth0]:51820',
        '[::1%x]:1',
        '[fe80::1%nosuchif0]:51820',
        '[fe80::1%25eth0]:51820',
        '[fe80::1%]:51820',
        '010.0.0.1:51820',
        '10.0x1:51820',
        '0x0a000001:51820',
        '[::ffff:010.0.0.1]:51820',
      ]) {
        const response = await t.mesh('peer/register', { agent_id: 'dave', pubkey: randomPublicKey(), endpoint }, t.bridge);
        expect(response.status, endpoint).toBe(400);
        expect(response.body.error.code).toBe('invalid_request');
        expect(fieldsOf(response.body)).toEqual(['endpoint']);
        if (endpoint.includes('%')) expect(JSON.stringify(response.body)).toContain('zone ids');
      }
      expect(await peerCount()).toBe(before);
    });

    it('refuses a public key another agent holds (409)', async () => {
      const { pubkey } = await t.register('erin');
      await t.createAgents('frank');
      const taken = await t.mesh('peer/register', { agent_id: 'frank', pubkey, endpoint: '10.0.0.6:51820' }, t.bridge);
      expect(taken.status).toBe(409);
      expect(taken.body.error.code).toBe('conflict');
      expect(JSON.stringify(taken.body)).not.toContain(pubkey);
    });

    it('gives distinct addresses to concurrent registrations and one address to one agent registering concurrently', async () => {
      const agents = Array.from({ length: 24 }, (_, index) => `burst-${index}`);
      await t.createAgents(...agents, 'solo');
      const answers = await Promise.all(
        agents.map((agent) =>
          t.mesh('peer/register', { agent_id: agent, pubkey: randomPublicKey(), endpoint: '10.9.0.1:51820' }, t.bridge),
        ),
      );
      expect(answers.map((answer) => answer.status)).toEqual(agents.map(() => 200));
      const addresses = answers.map((answer) => answer.body.address as string);
      expect(new Set(addresses).size).toBe(agents.length);
      const same = await Promise.all(
        Array.from({ length: 6 }, () =>
          t.mesh('peer/register', { agent_id: 'solo', pubkey: randomPublicKey(), endpoint: '10.9.0.2:51820' }, t.bridge),
        ),
      );
      expect(same.map((answer) => answer.status)).toEqual(same.map(() => 200));
      expect(new Set(same.map((answer) => answer.body.address)).size).toBe(1);
      expect(addresses).not.toContain(same[0]?.body.address);
    });
  });

  describe('/peer/heartbeat', () => {
    it('bumps last_seen; the peer is online within the 120 s window and offline after it', async () => {
      await t.register('hank');
      await t.register('ivy');
      // ivy opens a port to hank, so hank is shown ivy's presence.
      expect((await t.mesh('acl/put', { from_agent: 'hank', to_agent: 'ivy', port: 22, proto: 'tcp' }, t.bridge)).status).toBe(200);
      clock.advance(60_000);
      const beat = await t.mesh('peer/heartbeat', { agent_id: 'ivy' }, t.bridge);
      expect(beat.status).toBe(200);
      expect(beat.body).toEqual({ agent_id: 'ivy', last_seen: new Date(clock.now()).toISOString() });
      clock.advance(120_000);
      let peers = (await t.mesh('netmap', { agent_id: 'hank' }, t.bridge)).body.peers;
      expect(peers).toEqual([expect.objectContaining({ agent_id: 'ivy', online: true, last_seen: beat.body.last_seen })]);
      clock.advance(1);
      peers = (await t.mesh('netmap', { agent_id: 'hank' }, t.bridge)).body.peers;
      expect(peers[0]).toMatchObject({ agent_id: 'ivy', online: false, last_seen: beat.body.last_seen });
    });

    it('answers 404 for an agent that never registered', async () => {
      const response = await t.mesh('peer/heartbeat', { agent_id: 'nobody' }, t.bridge);
      expect(response.status).toBe(404);
      expect(response.body.error.code).toBe('not_found');
    });
  });

  describe('ACLs, /netmap and /wg_config', () => {
    let addresses: Record<string, string>;

    beforeAll(async () => {
      addresses = {};
      for (const [agent, endpoint] of [
        ['gw-a', '203.0.113.1:51820'],
        ['gw-b', '[2001:db8::b]:51821'],
        ['gw-c', 'gw-c.example.net:51822'],
        ['gw-d', '203.0.113.4:51823'],
      ] as const) {
        addresses[agent] = (await t.register(agent, endpoint)).address;
      }
    });

    const acl = (from_agent: string, to_agent: string, proto: string, port: number) => ({ from_agent, to_agent, proto, port });

    it('puts ACLs idempotently, authorised by to_agent or the bridge key only', async () => {
      const put = await t.mesh('acl/put', acl('gw-a', 'gw-b', 'tcp', 8080), t.bridge);
      expect(put.status).toBe(200);
      expect(put.body).toEqual(acl('gw-a', 'gw-b', 'tcp', 8080));
      expect((await t.mesh('acl/put', acl('gw-a', 'gw-b', 'tcp', 8080), t.bridge)).status).toBe(200);
      const count = await db.knex('mesh_acls').where({ from_agent: 'gw-a', to_agent: 'gw-b' }).count({ n: '*' }).first();
      expect(Number((count as { n: number }).n)).toBe(1);

      // alice's device key opens alice's side; it cannot open bob's.
      expect((await t.mesh('acl/put', acl('bob', 'alice', 'udp', 53), 'alice')).status).toBe(200);
      const wrongSide = await t.mesh('acl/put', acl('alice', 'bob', 'tcp', 22), 'alice');
      expect(wrongSide.status).toBe(403);
      expect(await db.knex('mesh_acls').where({ from_agent: 'alice', to_agent: 'bob' }).first()).toBeUndefined();
    });

    it('refuses ACLs naming unknown agents (404) and malformed ACLs (400), changing nothing', async () => {
      const before = await db.knex('mesh_acls').count({ n: '*' }).first();
      const unknownFrom = await t.mesh('acl/put', acl('ghost', 'gw-a', 'tcp', 22), t.bridge);
      expect(unknownFrom.status).toBe(404);
      expect(unknownFrom.body.error.message).toContain('"ghost"');
      const unknownTo = await t.mesh('acl/put', acl('gw-a', 'ghost', 'tcp', 22), t.bridge);
      expect(unknownTo.status).toBe(404);
      for (const [bad, field] of [
        [acl('gw-a', 'gw-b', 'sctp', 22), 'proto'],
        [acl('gw-a', 'gw-b', 'tcp', 0), 'port'],
        [acl('gw-a', 'gw-b', 'tcp', 65_536), 'port'],
        [acl('gw-a', 'gw-b', 'icmp', 8), 'port'],
        [acl('gw-a', 'gw-a', 'tcp', 22), 'to_agent'],
        [{ from_agent: 'gw-a', to_agent: 'gw-b', proto: 'tcp' }, 'port'],
      ] as const) {
        const response = await t.mesh('acl/put', bad, t.bridge);
        expect(response.status, JSON.stringify(bad)).toBe(400);
        expect(fieldsOf(response.body)).toContain(field);
      }
      expect(await db.knex('mesh_acls').count({ n: '*' }).first()).toEqual(before);
    });

    it('revokes idempotently, authorised by either side of the ACL only', async () => {
      expect((await t.mesh('acl/put', acl('gw-c', 'gw-d', 'udp', 9999), t.bridge)).status).toBe(200);
      expect((await t.mesh('acl/revoke', acl('gw-c', 'gw-d', 'udp', 9999), 'alice')).status).toBe(403);
      // from_agent refuses a peer it did not ask for: bob granted alice access to bob, alice takes bob out of her configuration.
      expect((await t.mesh('acl/put', acl('alice', 'bob', 'tcp', 1), 'bob')).status).toBe(200);
      expect((await t.mesh('acl/revoke', acl('alice', 'bob', 'tcp', 1), 'alice')).body).toEqual({ revoked: 1 });
      expect((await t.mesh('acl/revoke', acl('gw-c', 'gw-d', 'udp', 9999), t.bridge)).body).toEqual({ revoked: 1 });
      expect((await t.mesh('acl/revoke', acl('gw-c', 'gw-d', 'udp', 9999), t.bridge)).body).toEqual({ revoked: 0 });
      expect((await t.mesh('acl/revoke', acl('bob', 'alice', 'udp', 53), 'alice')).body).toEqual({ revoked: 1 });
    });

    it('keeps a peer that from_agent removed out: to_agent cannot put it back until from_agent accepts it or the operator puts it', async () => {
      const netmapPeers = async (agent: 'alice' | 'bob') =>
        (await t.mesh('netmap', {}, agent)).body.peers.map((peer: { agent_id: string }) => peer.agent_id) as string[];
      // alice refused bob in the test before; the operator's put ends that.
      expect((await t.mesh('acl/put', acl('alice', 'bob', 'tcp', 7), 'bob')).status).toBe(409);
      expect((await t.mesh('acl/put', acl('alice', 'bob', 'tcp', 7), t.bridge)).status).toBe(200);
      expect(await netmapPeers('alice')).toContain('bob');
      // bob removing his own grant is no refusal, nor is alice removing an ACL that was not there.
      expect((await t.mesh('acl/revoke', acl('alice', 'bob', 'tcp', 7), 'bob')).body).toEqual({ revoked: 1 });
      expect((await t.mesh('acl/revoke', acl('alice', 'bob', 'tcp', 7), 'alice')).body).toEqual({ revoked: 0 });
      expect((await t.mesh('acl/put', acl('alice', 'bob', 'tcp', 7), 'bob')).status).toBe(200);
      expect((await t.mesh('acl/revoke', acl('alice', 'bob', 'tcp', 7), 'alice')).body).toEqual({ revoked: 1 });
      for (const again of [acl('alice', 'bob', 'tcp', 7), acl('alice', 'bob', 'udp', 9), acl('alice', 'bob', 'icmp', 0)]) {
        const refused = await t.mesh('acl/put', again, 'bob');
        expect(refused.status).toBe(409);
        expect(refused.body.error).toMatchObject({ code: 'conflict', details: { refused_by: 'alice' } });
        expect(refused.body.error.message).toContain('/acl/accept');
      }
      expect(await db.knex('mesh_acls').where({ from_agent: 'alice', to_agent: 'bob' }).first()).toBeUndefined();
      expect(await netmapPeers('alice')).not.toContain('bob');
      // The refusal is alice's of bob only: bob may still open ports to others.
      expect((await t.mesh('acl/put', acl('carol', 'bob', 'tcp', 7), 'bob')).status).toBe(200);
      // Only alice (or the operator) accepts bob again; bob cannot, and a pair of one agent is 400.
      expect((await t.mesh('acl/accept', { from_agent: 'alice', to_agent: 'bob' }, 'bob')).status).toBe(403);
      const self = await t.mesh('acl/accept', { from_agent: 'alice', to_agent: 'alice' }, 'alice');
      expect(self.status).toBe(400);
      expect(fieldsOf(self.body)).toEqual(['to_agent']);
      expect((await t.mesh('acl/accept', { from_agent: 'alice', to_agent: 'bob' }, 'alice')).body).toEqual({
        from_agent: 'alice',
        to_agent: 'bob',
        lifted: 1,
      });
      expect((await t.mesh('acl/accept', { from_agent: 'alice', to_agent: 'bob' }, 'alice')).body.lifted).toBe(0);
      expect((await t.mesh('acl/put', acl('alice', 'bob', 'tcp', 7), 'bob')).status).toBe(200);
      for (const cleanup of [acl('alice', 'bob', 'tcp', 7), acl('carol', 'bob', 'tcp', 7)]) await t.mesh('acl/revoke', cleanup, t.bridge);
    });

    it('shows in /netmap the peers the caller may reach or that may reach it, and only the ACLs involving it', async () => {
      await t.mesh('acl/put', acl('gw-c', 'gw-a', 'icmp', 0), t.bridge);
      await t.mesh('acl/put', acl('gw-b', 'gw-d', 'tcp', 443), t.bridge);
      const netmap = await t.mesh('netmap', { agent_id: 'gw-a' }, t.bridge);
      expect(netmap.status).toBe(200);
      expect(netmap.body.peers.map((peer: { agent_id: string }) => peer.agent_id)).toEqual(['gw-b', 'gw-c']);
      expect(netmap.body.peers[0]).toEqual({
        agent_id: 'gw-b',
        address: addresses['gw-b'],
        pubkey: expect.any(String),
        endpoint: '[2001:db8::b]:51821',
        online: true,
        last_seen: expect.stringMatching(ISO_MS),
      });
      expect(netmap.body.peers[1]).toMatchObject({ agent_id: 'gw-c', endpoint: null, online: null, last_seen: null });
      expect(netmap.body.acls).toEqual([acl('gw-a', 'gw-b', 'tcp', 8080), acl('gw-c', 'gw-a', 'icmp', 0)]);
      expect(netmap.body.self).toMatchObject({ agent_id: 'gw-a', address: addresses['gw-a'] });
      const lonely = await t.mesh('netmap', {}, 'carol');
      expect(lonely.body).toMatchObject({ peers: [], acls: [] });
    });

    it('orders the ACLs of /netmap by code point, as SQLite and a C-collated PostgreSQL order its peers', async () => {
      for (const [agent, endpoint] of [
        ['Gw-Z', '203.0.113.26:51820'],
        ['gw-y', '203.0.113.25:51820'],
      ] as const) {
        await t.register(agent, endpoint);
        await t.mesh('acl/put', acl(agent, 'gw-d', 'tcp', 22), t.bridge);
      }
      const netmap = await t.mesh('netmap', { agent_id: 'gw-d' }, t.bridge);
      const from = netmap.body.acls.map((entry: { from_agent: string }) => entry.from_agent);
      expect(from.indexOf('Gw-Z')).toBeLessThan(from.indexOf('gw-y'));
    });

    it('renders /wg_config as { config } and as text/plain, with the pair’s PSK on both sides', async () => {
      const json = await t.mesh('wg_config', { agent_id: 'gw-a' }, t.bridge);
      expect(json.status).toBe(200);
      const config = json.body.config as string;
      expect(configValues(config, 'Address')).toEqual([`${addresses['gw-a']}/32`]);
      expect(configValues(config, 'ListenPort')).toEqual(['51820']);
      expect(configValues(config, 'PrivateKey')).toEqual(['AGENTINFRA_PRIVATE_KEY']);
      const peers = configPeers(config);
      expect([...peers.keys()]).toEqual(['gw-b', 'gw-c']);
      expect(peers.get('gw-b')).toMatchObject({
        AllowedIPs: `${addresses['gw-b']}/32`,
        Endpoint: '[2001:db8::b]:51821',
        PersistentKeepalive: '25',
        PresharedKey: expect.stringMatching(/^[A-Za-z0-9+/]{43}=$/),
      });
      // gw-c may reach gw-a, not the other way round: gw-a learns gw-c's endpoint from gw-c's handshake, and is not shown it.
      expect(peers.get('gw-c')).toMatchObject({ AllowedIPs: `${addresses['gw-c']}/32`, PersistentKeepalive: '25' });
      expect(peers.get('gw-c')?.Endpoint).toBeUndefined();
      const ofC = configPeers((await t.mesh('wg_config', { agent_id: 'gw-c' }, t.bridge)).body.config);
      expect(ofC.get('gw-a')?.Endpoint).toBe('203.0.113.1:51820');
      const [postUp] = configValues(config, 'PostUp');
      expect(postUp).toContain(`ip saddr { ${addresses['gw-c']} } meta l4proto icmp accept`);
      expect(postUp).not.toContain('dport');
      expect(configValues(config, 'PreDown')).toEqual(["nft 'delete table inet agentinfra_mesh'"]);

      const text = await t.mesh('wg_config', { agent_id: 'gw-a' }, { ...t.bridge, headers: { accept: 'text/plain' } });
      expect(text.status).toBe(200);
      expect(text.headers.get('content-type')).toMatch(/^text\/plain/);
      expect(text.body).toBe(config);

      const ofB = configPeers((await t.mesh('wg_config', { agent_id: 'gw-b' }, t.bridge)).body.config);
      expect(ofB.get('gw-a')?.PresharedKey).toBe(peers.get('gw-b')?.PresharedKey);
      expect(configValues((await t.mesh('wg_config', { agent_id: 'gw-b' }, t.bridge)).body.config, 'PostUp')[0]).toContain(
        `ip saddr . tcp dport { ${addresses['gw-a']} . 8080 } accept`,
      );
    });

    it('hands out no stored endpoint that is no longer valid (a zone id from before they were refused), and still renders its own agent’s config', async () => {
      const { pubkey } = await t.register('zed', '192.0.2.9:51829');
      expect((await t.mesh('acl/put', { from_agent: 'alice', to_agent: 'zed', proto: 'tcp', port: 22 }, t.bridge)).status).toBe(200);
      await db.knex('mesh_peers').where({ agent_id: 'zed' }).update({ endpoint: '[fe80::1%nosuchif0]:51829' });
      try {
        const netmap = await t.mesh('netmap', {}, 'alice');
        expect(netmap.body.peers.find((peer: { agent_id: string }) => peer.agent_id === 'zed')).toMatchObject({ pubkey, endpoint: null });
        const config = (await t.mesh('wg_config', {}, 'alice')).body.config as string;
        expect(configPeers(config).get('zed')).toMatchObject({ PublicKey: pubkey });
        expect(configPeers(config).get('zed')?.Endpoint).toBeUndefined();
        expect(config).not.toContain('nosuchif0');
        const own = await t.mesh('wg_config', { agent_id: 'zed' }, t.bridge);
        expect(own.status).toBe(200);
        expect(configValues(own.body.config, 'ListenPort')).toEqual(['51829']);
      } finally {
        await t.mesh('acl/revoke', { from_agent: 'alice', to_agent: 'zed', proto: 'tcp', port: 22 }, t.bridge);
      }
    });

    it('keeps PSKs sealed at rest and out of every other response', async () => {
      const config = (await t.mesh('wg_config', { agent_id: 'gw-a' }, t.bridge)).body.config as string;
      const psk = configPeers(config).get('gw-b')?.PresharedKey as string;
      const rows = (await db.knex('mesh_psks').select('sealed')) as Array<{ sealed: string }>;
      expect(rows.length).toBeGreaterThan(0);
      for (const row of rows) {
        expect(row.sealed).toMatch(/^sb1\./);
        expect(row.sealed).not.toContain(psk);
      }
      const netmap = await t.mesh('netmap', { agent_id: 'gw-a' }, t.bridge);
      const rotated = await t.mesh('psk/rotate', { a: 'gw-a', b: 'gw-c' }, t.bridge);
      for (const body of [netmap.body, rotated.body]) expect(JSON.stringify(body)).not.toContain(psk);
    });

    it('answers 404 for /wg_config of an agent that never registered, and 400 for the bridge key without agent_id', async () => {
      const unregistered = await t.mesh('wg_config', { agent_id: 'nobody' }, t.bridge);
      expect(unregistered.status).toBe(404);
      expect(unregistered.body.error.code).toBe('not_found');
      const noAgent = await t.mesh('wg_config', {}, t.bridge);
      expect(noAgent.status).toBe(400);
      expect(fieldsOf(noAgent.body)).toEqual(['agent_id']);
      expect((await t.mesh('netmap', { agent_id: 'alice' }, 'bob')).status).toBe(403);
    });

    it('rotates a pair’s PSK: both sides get the same new key; callers outside the pair are refused', async () => {
      const pskOf = async (agent: string, peer: string) =>
        configPeers((await t.mesh('wg_config', { agent_id: agent }, t.bridge)).body.config).get(peer)?.PresharedKey;
      const before = await pskOf('gw-a', 'gw-b');
      clock.advance(1_000);
      const rotated = await t.mesh('psk/rotate', { a: 'gw-b', b: 'gw-a' }, t.bridge);
      expect(rotated.status).toBe(200);
      expect(rotated.body).toEqual({ a: 'gw-b', b: 'gw-a', rotated_at: new Date(clock.now()).toISOString() });
      const afterA = await pskOf('gw-a', 'gw-b');
      expect(afterA).not.toBe(before);
      expect(await pskOf('gw-b', 'gw-a')).toBe(afterA);

      await t.register('alice');
      await t.register('bob');
      expect((await t.mesh('acl/put', acl('bob', 'alice', 'tcp', 22), 'alice')).status).toBe(200);
      expect((await t.mesh('psk/rotate', { a: 'alice', b: 'bob' }, 'alice')).status).toBe(200);
      expect((await t.mesh('psk/rotate', { a: 'alice', b: 'bob' }, 'bob')).status).toBe(200);
      const outsider = await t.mesh('psk/rotate', { a: 'alice', b: 'bob' }, 'carol');
      expect(outsider.status).toBe(403);
      expect(outsider.body.error.code).toBe('forbidden');
      const same = await t.mesh('psk/rotate', { a: 'gw-a', b: 'gw-a' }, t.bridge);
      expect(same.status).toBe(400);
      expect(fieldsOf(same.body)).toEqual(['b']);
      expect((await t.mesh('psk/rotate', { a: 'gw-a', b: 'ghost' }, t.bridge)).status).toBe(404);
    });

    it('answers psk/rotate of a pair no ACL links with the 404 of an unregistered agent, and creates no PSK', async () => {
      await t.register('carol');
      const pskRows = () => db.knex('mesh_psks').where({ agent_a: 'alice', agent_b: 'carol' }).count({ n: '*' }).first();
      const rowsBefore = await pskRows();
      // carol and alice are both registered, but neither opened a port to the other.
      const unlinked = await t.mesh('psk/rotate', { a: 'carol', b: 'alice' }, 'carol');
      const unregistered = await t.mesh('psk/rotate', { a: 'carol', b: 'nobody' }, 'carol');
      expect(unlinked.status).toBe(404);
      expect(unlinked.body.error.code).toBe('not_found');
      expect(Object.keys(unlinked.body.error)).toEqual(Object.keys(unregistered.body.error));
      expect(unlinked.body.error.message.replace('"alice"', '"X"')).toBe(unregistered.body.error.message.replace('"nobody"', '"X"'));
      expect(await pskRows()).toEqual(rowsBefore);
      // An ACL in either direction links the pair, whichever side put it; revoking the last one unlinks it again.
      expect((await t.mesh('acl/put', acl('carol', 'alice', 'tcp', 5432), 'alice')).status).toBe(200);
      expect((await t.mesh('psk/rotate', { a: 'carol', b: 'alice' }, 'carol')).status).toBe(200);
      expect((await t.mesh('acl/revoke', acl('carol', 'alice', 'tcp', 5432), 'alice')).body).toEqual({ revoked: 1 });
      expect((await t.mesh('psk/rotate', { a: 'alice', b: 'carol' }, 'alice')).status).toBe(404);
    });

    it('shows a peer’s presence only to agents it opened a port to, not to those that merely let it in', async () => {
      await t.register('bob');
      await t.register('carol');
      // bob lets carol reach him: carol never agreed to be in bob's view.
      expect((await t.mesh('acl/put', acl('carol', 'bob', 'tcp', 8443), 'bob')).status).toBe(200);
      try {
        const { pubkey, address } = (await t.mesh('netmap', {}, 'carol')).body.self;
        const ofBob = (await t.mesh('netmap', {}, 'bob')).body.peers.find((peer: { agent_id: string }) => peer.agent_id === 'carol');
        expect(ofBob).toEqual({ agent_id: 'carol', address, pubkey, endpoint: null, online: null, last_seen: null });
        // carol may reach bob, who opened the port: she is shown his endpoint and presence.
        const ofCarol = (await t.mesh('netmap', {}, 'carol')).body.peers.find((peer: { agent_id: string }) => peer.agent_id === 'bob');
        expect(ofCarol).toMatchObject({
          agent_id: 'bob',
          endpoint: expect.any(String),
          online: true,
          last_seen: expect.stringMatching(ISO_MS),
        });
        // Once carol opens a port to bob, she shares hers with him.
        expect((await t.mesh('acl/put', acl('bob', 'carol', 'tcp', 22), 'carol')).status).toBe(200);
        const now = (await t.mesh('netmap', {}, 'bob')).body.peers.find((peer: { agent_id: string }) => peer.agent_id === 'carol');
        expect(now).toMatchObject({
          agent_id: 'carol',
          endpoint: expect.any(String),
          online: true,
          last_seen: expect.stringMatching(ISO_MS),
        });
      } finally {
        await t.mesh('acl/revoke', acl('carol', 'bob', 'tcp', 8443), t.bridge);
        await t.mesh('acl/revoke', acl('bob', 'carol', 'tcp', 22), t.bridge);
      }
    });

    it('lets a delegation with mesh.read read the netmap, and refuses one without it', async () => {
      const delegate = (scope: string[]) =>
        t.server.call(
          'agent-identity/delegate',
          { from_agent: 'alice', to_agent: 'bob', scope, expires_at: new Date(clock.now() + 3_600_000).toISOString() },
          { credential: t.keys.alice },
        );
      const reader = await delegate(['mesh.read']);
      expect(reader.status).toBe(200);
      const read = await t.mesh('netmap', {}, { credential: reader.body.token });
      expect(read.status).toBe(200);
      expect(read.body.self?.agent_id).toBe('alice');
      expect((await t.mesh('peer/heartbeat', {}, { credential: reader.body.token })).status).toBe(403);
      const other = await delegate(['secrets.read']); // #12: only loaded modules' permissions can be delegated
      expect(other.status).toBe(200);
      expect((await t.mesh('wg_config', {}, { credential: other.body.token })).status).toBe(403);
    });
  });

  it('describes every mesh route in the OpenAPI document and keeps the kernel’s 400 and 405 answers', async () => {
    const response = await t.server.kernel.app.request('/openapi.json');
    expect(response.status).toBe(200);
    const paths = Object.keys(((await response.json()) as { paths: Record<string, unknown> }).paths);
    for (const path of ['peer/register', 'peer/heartbeat', 'acl/put', 'acl/revoke', 'netmap', 'wg_config', 'psk/rotate']) {
      expect(paths).toContain(`/functions/v1/agent-mesh/${path}`);
    }
    const unknownField = await t.mesh('netmap', { agent_id: 'alice', verbose: true }, t.bridge);
    expect(unknownField.status).toBe(400);
    const get = await t.server.call('agent-mesh/netmap', undefined, { ...t.bridge, method: 'GET' });
    expect(get.status).toBe(405);
  });
});

describe.each(sqlDatabases())('agent-mesh ACLs of one pair on $name', ({ create }) => {
  let t: MeshTestServer;
  let db: SqlDatabase;
  let cleanup: () => Promise<void>;

  beforeEach(async () => {
    const fixture = await create();
    db = fixture.db;
    cleanup = fixture.cleanup;
    t = await startMeshTestServer({ db, meshConfig: { maxAclsPerPair: 3 }, listen: false });
    for (const agent of ['alice', 'bob', 'carol']) await t.register(agent, `203.0.113.${agent.length}:51820`);
  });

  afterEach(async () => {
    await t?.server.stop();
    await cleanup?.();
  });

  const acl = (from_agent: string, to_agent: string, proto: string, port: number) => ({ from_agent, to_agent, proto, port });
  const pairRules = async (from_agent: string, to_agent: string) =>
    ((await db.knex('mesh_acls').where({ from_agent, to_agent }).orderBy(['proto', 'port'])) as Array<{ proto: string; port: number }>).map(
      (row) => `${row.port}/${row.proto}`,
    );
  const grant = async (from_agent: string, to_agent: 'alice' | 'bob' | 'carol', rules: Array<[string, number]>) => {
    for (const [proto, port] of rules) expect((await t.mesh('acl/put', acl(from_agent, to_agent, proto, port), to_agent)).status).toBe(200);
  };

  // The probe: bob put alice→bob on tcp 1, 2 and 3; alice revoked tcp 1 and still had bob's [Peer] and the tcp 2/3 rules.
  it('from_agent’s revoke removes every rule of the pair, so the peer leaves its /wg_config and /netmap', async () => {
    await grant('alice', 'bob', [
      ['tcp', 1],
      ['tcp', 2],
      ['udp', 3],
    ]);
    await grant('alice', 'carol', [['tcp', 1]]);
    expect(configPeers((await t.mesh('wg_config', {}, 'alice')).body.config).has('bob')).toBe(true);
    const revoked = await t.mesh('acl/revoke', acl('alice', 'bob', 'tcp', 1), 'alice');
    expect(revoked.status).toBe(200);
    expect(revoked.body).toEqual({ revoked: 3 });
    expect(await pairRules('alice', 'bob')).toEqual([]);
    const peers = configPeers((await t.mesh('wg_config', {}, 'alice')).body.config);
    expect([...peers.keys()]).toEqual(['carol']);
    const netmap = (await t.mesh('netmap', {}, 'alice')).body;
    expect(netmap.peers.map((peer: { agent_id: string }) => peer.agent_id)).toEqual(['carol']);
    expect(netmap.acls).toEqual([acl('alice', 'carol', 'tcp', 1)]);
    expect((await t.mesh('netmap', {}, 'bob')).body).toMatchObject({ peers: [], acls: [] });
    // The refusal stands, and the rules of alice's other pair stay.
    const refused = await t.mesh('acl/put', acl('alice', 'bob', 'tcp', 2), 'bob');
    expect(refused.status).toBe(409);
    expect(refused.body.error).toMatchObject({ code: 'conflict', details: { refused_by: 'alice' } });
    expect(await pairRules('alice', 'carol')).toEqual(['1/tcp']);
    expect((await t.mesh('acl/revoke', acl('alice', 'bob', 'tcp', 1), 'alice')).body).toEqual({ revoked: 0 });
  });

  it('from_agent’s revoke of a rule that does not exist still removes the pair’s other rules', async () => {
    await grant('alice', 'bob', [
      ['tcp', 2],
      ['icmp', 0],
    ]);
    expect((await t.mesh('acl/revoke', acl('alice', 'bob', 'udp', 53), 'alice')).body).toEqual({ revoked: 2 });
    expect(await pairRules('alice', 'bob')).toEqual([]);
    expect((await t.mesh('acl/put', acl('alice', 'bob', 'tcp', 2), 'bob')).status).toBe(409);
  });

  it('to_agent’s and the bridge key’s revokes remove the named rule only, and refuse nothing', async () => {
    await grant('alice', 'bob', [
      ['tcp', 1],
      ['tcp', 2],
      ['tcp', 3],
    ]);
    expect((await t.mesh('acl/revoke', acl('alice', 'bob', 'tcp', 1), 'bob')).body).toEqual({ revoked: 1 });
    expect(await pairRules('alice', 'bob')).toEqual(['2/tcp', '3/tcp']);
    expect((await t.mesh('acl/revoke', acl('alice', 'bob', 'tcp', 2), t.bridge)).body).toEqual({ revoked: 1 });
    expect(await pairRules('alice', 'bob')).toEqual(['3/tcp']);
    expect(configPeers((await t.mesh('wg_config', {}, 'alice')).body.config).has('bob')).toBe(true);
    expect((await t.mesh('acl/put', acl('alice', 'bob', 'tcp', 1), 'bob')).status).toBe(200);
  });

  const pskOf = async (agent: TestAgent, peer: string) =>
    configPeers((await t.mesh('wg_config', {}, agent)).body.config).get(peer)?.PresharedKey;
  const pskRows = async () =>
    (await db.knex('mesh_psks').select('agent_a', 'agent_b').orderBy(['agent_a', 'agent_b'])) as Array<{
      agent_a: string;
      agent_b: string;
    }>;

  // A revoked link kept its PSK row, and linking the pair again handed out the old key.
  it('deletes a pair’s PSK when its last ACL is revoked, by to_agent, the bridge key or from_agent, so a new link gets a new key', async () => {
    const keys = new Set<string>();
    for (const revoker of ['bob', t.bridge, 'alice'] as const) {
      await grant('alice', 'bob', [['tcp', 22]]);
      const psk = await pskOf('alice', 'bob');
      expect(psk).toMatch(/^[A-Za-z0-9+/]{43}=$/);
      expect(await pskOf('bob', 'alice')).toBe(psk);
      keys.add(psk as string);
      expect(await pskRows()).toEqual([{ agent_a: 'alice', agent_b: 'bob' }]);
      expect((await t.mesh('acl/revoke', acl('alice', 'bob', 'tcp', 22), revoker)).body).toEqual({ revoked: 1 });
      expect(await pskRows()).toEqual([]);
      if (revoker === 'alice') expect((await t.mesh('acl/accept', { from_agent: 'alice', to_agent: 'bob' }, 'alice')).status).toBe(200);
    }
    await grant('alice', 'bob', [['tcp', 22]]);
    const relinked = await pskOf('bob', 'alice');
    expect(relinked).toMatch(/^[A-Za-z0-9+/]{43}=$/);
    keys.add(relinked as string);
    expect(keys.size).toBe(4);
  });

  // /wg_config created a missing PSK outside the pair's lock: a revoke between its read of the peers and its insert left a key behind.
  it('leaves no PSK behind when a revoke races the /wg_config that creates the pair’s key', async () => {
    for (let round = 0; round < 20; round += 1) {
      await grant('alice', 'bob', [['tcp', 22]]);
      const [config, revoked] = await Promise.all([
        t.mesh('wg_config', {}, 'alice'),
        t.mesh('acl/revoke', acl('alice', 'bob', 'tcp', 22), 'bob'),
      ]);
      expect(config.status).toBe(200);
      expect(revoked.body).toEqual({ revoked: 1 });
      expect(await pskRows(), `round ${round}`).toEqual([]);
    }
  });

  it('keeps a pair’s PSK while another ACL, in either direction, still links it', async () => {
    await grant('alice', 'bob', [
      ['tcp', 1],
      ['tcp', 2],
    ]);
    await grant('bob', 'alice', [['udp', 3]]);
    const psk = await pskOf('alice', 'bob');
    expect((await t.mesh('acl/revoke', acl('alice', 'bob', 'tcp', 1), 'bob')).body).toEqual({ revoked: 1 });
    expect((await t.mesh('acl/revoke', acl('alice', 'bob', 'tcp', 2), 'alice')).body).toEqual({ revoked: 1 });
    expect(await pskRows()).toEqual([{ agent_a: 'alice', agent_b: 'bob' }]);
    expect(await pskOf('alice', 'bob')).toBe(psk);
    expect((await t.mesh('acl/revoke', acl('bob', 'alice', 'udp', 3), 'bob')).body).toEqual({ revoked: 1 });
    expect(await pskRows()).toEqual([]);
  });

  it('refuses a rule beyond mesh.maxAclsPerPair with 409 conflict and stores nothing; an existing rule and other pairs still pass', async () => {
    await grant('alice', 'bob', [
      ['tcp', 1],
      ['udp', 1],
      ['icmp', 0],
    ]);
    for (const as of ['bob', t.bridge] as const) {
      const over = await t.mesh('acl/put', acl('alice', 'bob', 'tcp', 4), as);
      expect(over.status).toBe(409);
      expect(over.body).toEqual({
        error: { code: 'conflict', message: expect.stringContaining('mesh.maxAclsPerPair'), details: { quota: 3, used: 3 } },
      });
    }
    expect(await pairRules('alice', 'bob')).toEqual(['0/icmp', '1/tcp', '1/udp']);
    expect((await t.mesh('acl/put', acl('alice', 'bob', 'tcp', 1), 'bob')).status).toBe(200);
    await grant('carol', 'bob', [['tcp', 4]]);
    await grant('bob', 'alice', [['tcp', 4]]);
    expect((await t.mesh('acl/revoke', acl('alice', 'bob', 'udp', 1), 'bob')).body).toEqual({ revoked: 1 });
    await grant('alice', 'bob', [['tcp', 4]]);
  });

  it('keeps concurrent puts of one pair within mesh.maxAclsPerPair', async () => {
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, index) => t.mesh('acl/put', acl('alice', 'bob', 'tcp', 100 + index), 'bob')),
    );
    expect(answers.filter((answer) => answer.status === 200)).toHaveLength(3);
    expect(answers.filter((answer) => answer.status === 409)).toHaveLength(9);
    expect(await pairRules('alice', 'bob')).toHaveLength(3);
  });
});

describe.each(sqlDatabases())('agent-mesh configuration on $name', ({ create }) => {
  it('allocates from a configured prefix, omits keepalive when 0, and answers 409 when the prefix is exhausted', async () => {
    const { db, cleanup } = await create();
    const t = await startMeshTestServer({ db, meshConfig: { prefix: '10.77.0.0/30', keepaliveSeconds: 0 } });
    try {
      const first = await t.register('alice');
      const second = await t.register('bob');
      expect([first.address, second.address]).toEqual(['10.77.0.1', '10.77.0.2']);
      const full = await t.mesh('peer/register', { agent_id: 'carol', pubkey: randomPublicKey(), endpoint: '10.0.0.3:51820' }, t.bridge);
      expect(full.status).toBe(409);
      expect(full.body.error.message).toContain('10.77.0.0/30');
      expect(
        (await t.mesh('peer/register', { agent_id: 'alice', pubkey: randomPublicKey(), endpoint: '10.0.0.1:1' }, t.bridge)).body.address,
      ).toBe('10.77.0.1');
      await t.mesh('acl/put', { from_agent: 'alice', to_agent: 'bob', proto: 'icmp', port: 0 }, t.bridge);
      const config = (await t.mesh('wg_config', { agent_id: 'alice' }, t.bridge)).body.config as string;
      expect(config).not.toContain('PersistentKeepalive');
    } finally {
      await t.server.stop();
      await cleanup();
    }
  });

  it('allocates IPv6 addresses with /128 routes and ip6 rules', async () => {
    const { db, cleanup } = await create();
    const t = await startMeshTestServer({ db, meshConfig: { prefix: 'fd7a:115c:a1e0::/48' } });
    try {
      expect((await t.register('alice')).address).toBe('fd7a:115c:a1e0::1');
      expect((await t.register('bob')).address).toBe('fd7a:115c:a1e0::2');
      await t.mesh('acl/put', { from_agent: 'alice', to_agent: 'bob', proto: 'tcp', port: 22 }, t.bridge);
      const config = (await t.mesh('wg_config', { agent_id: 'bob' }, t.bridge)).body.config as string;
      expect(configValues(config, 'Address')).toEqual(['fd7a:115c:a1e0::2/128']);
      expect(configPeers(config).get('alice')?.AllowedIPs).toBe('fd7a:115c:a1e0::1/128');
      expect(config).toContain('ip6 saddr . tcp dport { fd7a:115c:a1e0::1 . 22 } accept');
    } finally {
      await t.server.stop();
      await cleanup();
    }
  });
});
