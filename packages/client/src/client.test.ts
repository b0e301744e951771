import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type AgentInfraClient, createClient } from './index.js';
import { seedAgent } from './test-support/agent.js';
import { startServer, type TestServer } from './test-support/serve.js';

async function bytesOf(stream: ReadableStream<Uint8Array>): Promise<Buffer> {
  const chunks: Uint8Array[] = [];
  for await (const chunk of stream as unknown as AsyncIterable<Uint8Array>) chunks.push(chunk);
  return Buffer.concat(chunks);
}

describe('typed client against agentinfra serve', () => {
  let server: TestServer;
  let bridge: AgentInfraClient;
  let alice: AgentInfraClient;

  beforeAll(async () => {
    server = await startServer();
    ({ bridge, agent: alice } = await seedAgent(server.url, 'alice'));
  }, 60_000);
  afterAll(() => server?.stop());

  it('identity: secrets put, get and list', async () => {
    await alice.identity.secrets.put({ agent_id: 'alice', key: 'db_password', value: 's3cret' });
    const secret = await alice.identity.secrets.get({ agent_id: 'alice', key: 'db_password' });
    expect(secret.value).toBe('s3cret');
    const listed = await alice.identity.secrets.list({ agent_id: 'alice' });
    expect(JSON.stringify(listed)).toContain('db_password');
  });

  it('memory: write, query by meaning, kv put and get (helpers and invoke)', async () => {
    const written = await alice.memory.write({
      agent_id: 'alice',
      kind: 'semantic',
      text: 'Deploys to production happen on Tuesdays after the standup.',
      provenance: 'client-test',
      scope: ['self'],
    });
    await alice.memory.write({
      agent_id: 'alice',
      kind: 'semantic',
      text: 'The user likes dark mode.',
      provenance: 'client-test',
      scope: ['self'],
    });
    const found = await alice.invoke('agent-memory/mem/query', { agent_id: 'alice', q: 'which day do we deploy?', k: 1, scope: ['self'] });
    expect(found.hits[0]?.id).toBe(written.id);
    await alice.memory.kv.put({ agent_id: 'alice', key: 'theme', value: { dark: true }, scope: ['self'] });
    expect((await alice.memory.kv.get({ agent_id: 'alice', key: 'theme', scope: ['self'] })).value).toEqual({ dark: true });
  });

  it('artifacts: upload from a buffer, a Node stream and a web stream, then stream back', async () => {
    const data = randomBytes(200_000);
    const sha256 = createHash('sha256').update(data).digest('hex');
    const fromBuffer = await alice.artifacts.upload({ agent_id: 'alice', key: 'blobs/a.bin', mime: 'application/octet-stream', data });
    expect(fromBuffer).toMatchObject({ status: 'committed', size: data.length, sha256 });
    const fromNode = await alice.artifacts.upload({
      agent_id: 'alice',
      key: 'blobs/b.bin',
      mime: 'application/octet-stream',
      data: Readable.from([data.subarray(0, 1000), data.subarray(1000)]),
      size: data.length,
    });
    expect(fromNode.sha256).toBe(sha256);
    const fromWeb = await alice.artifacts.upload({
      agent_id: 'alice',
      key: 'blobs/c.bin',
      mime: 'application/octet-stream',
      data: new Blob([data]).stream(),
      size: data.length,
    });
    expect(fromWeb.sha256).toBe(sha256);
    expect(await bytesOf(await alice.artifacts.stream({ artifact_id: fromWeb.artifact_id }))).toEqual(data);
    const listed = await alice.artifacts.list({ agent_id: 'alice', prefix: 'blobs/' });
    expect(listed.artifacts).toHaveLength(3);
    expect(listed.artifacts.every((artifact) => artifact.status === 'committed')).toBe(true);
  });

  it('artifacts: uploads a 50 MB stream without holding it, and streams it back', async () => {
    const size = 50 * 1024 * 1024;
    const chunk = randomBytes(1024 * 1024);
    const expected = createHash('sha256');
    for (let i = 0; i < 50; i += 1) expected.update(chunk);
    async function* source() {
      for (let i = 0; i < 50; i += 1) yield chunk;
    }
    const committed = await alice.artifacts.upload({
      agent_id: 'alice',
      key: 'big/50mb.bin',
      mime: 'application/octet-stream',
      data: source(),
      size,
    });
    expect(committed).toMatchObject({ status: 'committed', size, sha256: expected.digest('hex') });
    const back = createHash('sha256');
    let length = 0;
    for await (const part of (await alice.artifacts.stream({
      artifact_id: committed.artifact_id,
    })) as unknown as AsyncIterable<Uint8Array>) {
      back.update(part);
      length += part.byteLength;
    }
    expect({ length, sha256: back.digest('hex') }).toEqual({ length: size, sha256: committed.sha256 });
  }, 60_000);

  it('artifacts: upload from a file path', async () => {
    const path = join(mkdtempSync(join(tmpdir(), 'client-upload-')), 'notes.md');
    writeFileSync(path, '# Notes\n');
    const committed = await alice.artifacts.upload({ agent_id: 'alice', key: 'files/notes.md', mime: 'text/markdown', data: path });
    expect(committed).toMatchObject({ size: 8, sha256: createHash('sha256').update('# Notes\n').digest('hex') });
  });

  it('artifacts: a grant lets another agent stream the bytes', async () => {
    const { agent: bob } = await seedAgent(server.url, 'bob');
    const data = Buffer.from('shared report\n');
    const committed = await alice.artifacts.upload({ agent_id: 'alice', key: 'shared/report.txt', mime: 'text/plain', data });
    const grant = await alice.artifacts.grant({
      artifact_id: committed.artifact_id,
      to_agent: 'bob',
      expires_at: new Date(Date.now() + 3_600_000).toISOString(),
    });
    expect(await bytesOf(await bob.artifacts.stream({ grant_token: grant.token }))).toEqual(data);
  });

  it('mesh, gateway, postbox and scheduler answer through their helpers', async () => {
    const peer = await alice.mesh.peer.register({
      agent_id: 'alice',
      pubkey: Buffer.alloc(32, 1).toString('base64'),
      endpoint: '203.0.113.7:51820',
    });
    expect(peer.agent_id).toBe('alice');
    expect((await alice.mesh.netmap({ agent_id: 'alice' })).self?.address).toBe(peer.address);
    expect((await bridge.gateway.list({})).hosts).toEqual([]);
    const { address } = await alice.postbox.alloc({ agent_id: 'alice', local_part: 'alice-inbox' });
    expect(address).toMatch(/^alice-inbox@/);
    expect((await alice.postbox.list({ agent_id: 'alice' })).messages).toEqual([]);
    await expect(alice.scheduler.runs.list({ agent_id: 'alice', name: 'no-such-job' })).rejects.toMatchObject({
      status: 404,
      code: 'not_found',
    });
    expect(await bridge.scheduler.admin.summary({})).toBeTypeOf('object');
  });

  it('takes the key from AGENTINFRA_KEY and the URL from AGENTINFRA_URL', async () => {
    const { key } = await seedAgent(server.url, 'carol');
    vi.stubEnv('AGENTINFRA_URL', `${server.url}/functions/v1`);
    vi.stubEnv('AGENTINFRA_KEY', key);
    try {
      const carol = createClient();
      expect((await carol.identity.secrets.list({ agent_id: 'carol' })).secrets).toEqual([]);
    } finally {
      vi.unstubAllEnvs();
    }
  });
});
