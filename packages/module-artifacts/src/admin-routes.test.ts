import { createHash, randomBytes } from 'node:crypto';
import { sqlDatabases } from '@agentinfra/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ArtifactsTestServer, startArtifactsTestServer } from './test-support/artifacts-test-server.js';
import { type BlobBackend, blobBackends } from './test-support/blob-backends.js';

const inDays = (days: number) => new Date(Date.now() + days * 86_400_000).toISOString();
const fsBlobs = blobBackends.find((backend) => backend.name === 'fs');

// #16: the console lists artifacts and grants across agents through these bridge-key routes.
describe.each(sqlDatabases())('agent-artifacts operator routes on $name', ({ create }) => {
  let t: ArtifactsTestServer;
  let blobs: BlobBackend;
  let cleanup: () => Promise<void>;
  const bridge = () => ({ credential: t.server.bridgeKey });
  let committed: string;
  let pending: string;

  beforeAll(async () => {
    const fixture = await create();
    cleanup = fixture.cleanup;
    blobs = await (fsBlobs as NonNullable<typeof fsBlobs>).start();
    t = await startArtifactsTestServer({ db: fixture.db, blobs });
    const bytes = randomBytes(1000);
    const registered = await t.artifacts(
      'register',
      { agent_id: 'alice', key: 'reports/q3.pdf', mime: 'application/pdf', size: bytes.length },
      'alice',
    );
    committed = registered.body.artifact_id;
    await fetch(registered.body.upload_url, { method: 'PUT', body: bytes, headers: registered.body.upload_headers });
    const sha256 = createHash('sha256').update(bytes).digest('hex');
    expect((await t.artifacts('commit', { artifact_id: committed, sha256 }, 'alice')).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 2));
    pending = (await t.artifacts('register', { agent_id: 'bob', key: 'draft.txt', mime: 'text/plain', size: 5 }, 'bob')).body.artifact_id;
    for (const agent of ['bob', 'carol']) {
      const granted = await t.artifacts('grant', { artifact_id: committed, to_agent: agent, expires_at: inDays(1) }, 'alice');
      expect(granted.status).toBe(200);
    }
    expect((await t.artifacts('revoke', { artifact_id: committed, to_agent: 'carol' }, bridge())).body).toEqual({ revoked: 1 });
  });

  afterAll(async () => {
    await t?.stop();
    await blobs?.stop();
    await cleanup?.();
  });

  it('lists every agent’s artifacts newest first with owner, status and live grants', async () => {
    const listed = await t.artifacts('admin/artifacts/list', { limit: 1 }, bridge());
    expect(listed.status).toBe(200);
    expect(listed.body.artifacts).toEqual([
      expect.objectContaining({ artifact_id: pending, agent_id: 'bob', status: 'pending', sha256: null }),
    ]);
    const next = await t.artifacts('admin/artifacts/list', { limit: 1, cursor: listed.body.next_cursor }, bridge());
    expect(next.body).toEqual({
      artifacts: [
        expect.objectContaining({
          artifact_id: committed,
          agent_id: 'alice',
          key: 'reports/q3.pdf',
          size: 1000,
          status: 'committed',
          sha256: expect.stringMatching(/^[0-9a-f]{64}$/),
          active_grants: 1,
        }),
      ],
      next_cursor: null,
    });
  });

  it('filters by owner, status and artifact id', async () => {
    const alice = await t.artifacts('admin/artifacts/list', { agent_id: 'alice' }, bridge());
    expect(alice.body.artifacts.map((artifact: { artifact_id: string }) => artifact.artifact_id)).toEqual([committed]);
    const pendingOnly = await t.artifacts('admin/artifacts/list', { status: 'pending' }, bridge());
    expect(pendingOnly.body.artifacts.map((artifact: { artifact_id: string }) => artifact.artifact_id)).toEqual([pending]);
    expect((await t.artifacts('admin/artifacts/list', { status: 'expired' }, bridge())).body.artifacts).toEqual([]);
    const one = await t.artifacts('admin/artifacts/list', { artifact_id: pending }, bridge());
    expect(one.body.artifacts.map((artifact: { artifact_id: string }) => artifact.artifact_id)).toEqual([pending]);
    expect((await t.artifacts('admin/artifacts/list', { artifact_id: pending, agent_id: 'nobody' }, bridge())).body.artifacts).toEqual([]);
  });

  it('lists an artifact’s grants with their state and never a token', async () => {
    const grants = await t.artifacts('admin/grants/list', { artifact_id: committed }, bridge());
    expect(grants.body.agent_id).toBe('alice');
    expect(grants.body.grants.map((grant: { to_agent: string; state: string }) => [grant.to_agent, grant.state]).sort()).toEqual([
      ['bob', 'active'],
      ['carol', 'revoked'],
    ]);
    expect(JSON.stringify(grants.body)).not.toMatch(/"g_|token/);
    expect((await t.artifacts('admin/grants/list', { artifact_id: 'art_missing' }, bridge())).status).toBe(404);
  });

  it('counts artifacts, committed bytes and live grants; bridge key only', async () => {
    const summary = await t.artifacts('admin/summary', {}, bridge());
    expect(summary.body).toEqual({ artifacts: 2, committed: 1, pending: 1, expired: 0, committed_bytes: 1000, active_grants: 1 });
    expect((await t.artifacts('admin/summary', {}, 'alice')).status).toBe(403);
  });
});
