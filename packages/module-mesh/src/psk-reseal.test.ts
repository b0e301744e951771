import { createAesGcmSecretBox, newMasterKey, type SqlDatabase } from '@agentinfra/core';
import { keepOpen } from '@agentinfra/core/testing';
import { beforeFirstTransaction, sqlDatabases } from '@agentinfra/testkit';
import { describe, expect, it } from 'vitest';
import { meshModule } from './module.js';
import { presharedKeyContext } from './preshared-keys.js';
import { createPskReseal } from './psk-reseal.js';
import type { MeshService } from './service.js';
import { configPeers, type MeshTestServer, startMeshTestServer } from './test-support/mesh-test-server.js';

const pskOf = async (t: MeshTestServer, agent: string, peer: string) =>
  configPeers((await t.mesh('wg_config', { agent_id: agent }, t.bridge)).body.config).get(peer)?.PresharedKey;

const sealedRows = async (db: SqlDatabase) =>
  (await db.knex('mesh_psks').select('agent_a', 'agent_b', 'sealed').orderBy(['agent_a', 'agent_b'])) as Array<{
    agent_a: string;
    agent_b: string;
    sealed: string;
  }>;

/** Registers alice, bob and carol and lets bob reach alice on TCP 22 and alice ping carol: PSKs (alice, bob) and (alice, carol). */
async function meshOfThree(t: MeshTestServer): Promise<void> {
  for (const agent of ['alice', 'bob', 'carol']) await t.register(agent);
  await t.mesh('acl/put', { from_agent: 'bob', to_agent: 'alice', proto: 'tcp', port: 22 }, t.bridge);
  await t.mesh('acl/put', { from_agent: 'alice', to_agent: 'carol', proto: 'icmp', port: 0 }, t.bridge);
}

describe.each(sqlDatabases())('agent-mesh master key rotation on $name', ({ create }) => {
  it('reseals PSKs sealed with the previous master key, so /wg_config renders them once only the new key is configured', async () => {
    const { db, cleanup } = await create();
    const [oldKey, newKey] = [newMasterKey(), newMasterKey()];
    try {
      const first = await startMeshTestServer({ db: keepOpen(db), masterKey: oldKey });
      await meshOfThree(first);
      const before = { ab: await pskOf(first, 'alice', 'bob'), ac: await pskOf(first, 'alice', 'carol') };
      expect(before.ab).toMatch(/^[A-Za-z0-9+/]{43}=$/);
      await first.server.stop();
      const current = createAesGcmSecretBox({ masterKey: newKey, previousMasterKeys: [oldKey] });
      expect((await sealedRows(db)).map((row) => current.needsReseal(row.sealed))).toEqual([true, true]);

      const rotated = await startMeshTestServer({
        db: keepOpen(db),
        masterKey: newKey,
        previousMasterKeys: [oldKey],
        jobs: { enabled: false },
        agents: false,
      });
      expect(await pskOf(rotated, 'bob', 'alice')).toBe(before.ab);
      const job = meshModule.jobs?.find((candidate) => candidate.name === 'mesh.reseal-keys');
      expect(job?.schedule).toEqual({ every: 3_600_000 });
      const service = rotated.server.kernel.service<MeshService>('agent-mesh');
      await job?.run({ payload: null, attempt: 1, scheduledFor: null, signal: new AbortController().signal, service });
      expect((await sealedRows(db)).map((row) => current.needsReseal(row.sealed))).toEqual([false, false]);
      expect(await service.resealKeys()).toBe(0);
      await rotated.server.stop();

      const newOnly = await startMeshTestServer({ db: keepOpen(db), masterKey: newKey, jobs: { enabled: false }, agents: false });
      expect(await pskOf(newOnly, 'alice', 'bob')).toBe(before.ab);
      expect(await pskOf(newOnly, 'bob', 'alice')).toBe(before.ab);
      expect(await pskOf(newOnly, 'alice', 'carol')).toBe(before.ac);
      expect(await pskOf(newOnly, 'carol', 'alice')).toBe(before.ac);
      await newOnly.server.stop();
    } finally {
      await cleanup();
    }
  }, 30_000);

  it('keeps a PSK rotated after the reseal read it', async () => {
    const { db, cleanup } = await create();
    const [oldKey, newKey] = [newMasterKey(), newMasterKey()];
    try {
      const first = await startMeshTestServer({ db: keepOpen(db), masterKey: oldKey });
      await meshOfThree(first);
      const before = await pskOf(first, 'alice', 'bob');
      await first.server.stop();

      const rotated = await startMeshTestServer({
        db: keepOpen(db),
        masterKey: newKey,
        previousMasterKeys: [oldKey],
        jobs: { enabled: false },
        agents: false,
      });
      let afterRotation: string | undefined;
      const rotating = beforeFirstTransaction(db, async () => {
        expect((await rotated.mesh('psk/rotate', { a: 'alice', b: 'bob' }, rotated.bridge)).status).toBe(200);
        afterRotation = await pskOf(rotated, 'alice', 'bob');
      });
      const box = createAesGcmSecretBox({ masterKey: newKey, previousMasterKeys: [oldKey] });
      expect(await createPskReseal({ sql: rotating, secretBox: box }).resealAll()).toBe(1);
      expect(afterRotation).not.toBe(before);
      expect(await pskOf(rotated, 'alice', 'bob')).toBe(afterRotation);
      expect((await sealedRows(db)).map((row) => box.needsReseal(row.sealed))).toEqual([false, false]);
      await rotated.server.stop();
    } finally {
      await cleanup();
    }
  }, 30_000);

  it('walks every page of a mesh with more PSKs than one page, pairs sharing an agent across page boundaries', async () => {
    const { db, cleanup } = await create();
    const [oldKey, newKey] = [newMasterKey(), newMasterKey()];
    try {
      const server = await startMeshTestServer({
        db: keepOpen(db),
        masterKey: newKey,
        previousMasterKeys: [oldKey],
        jobs: { enabled: false },
      });
      const old = createAesGcmSecretBox({ masterKey: oldKey });
      const rows = ['hub-a', 'hub-b', 'hub-c'].flatMap((a) =>
        Array.from({ length: 400 }, (_, i) => {
          const b = `peer-${String(i).padStart(4, '0')}`;
          return {
            agent_a: a,
            agent_b: b,
            sealed: old.seal({ plaintext: `${a}/${b}`, context: presharedKeyContext({ a, b }) }),
            rotated_at: 0,
          };
        }),
      );
      for (let start = 0; start < rows.length; start += 200) await db.knex('mesh_psks').insert(rows.slice(start, start + 200));
      const service = server.server.kernel.service<MeshService>('agent-mesh');
      expect(await service.resealKeys()).toBe(1_200);
      const box = createAesGcmSecretBox({ masterKey: newKey });
      const after = await sealedRows(db);
      expect(after).toHaveLength(1_200);
      for (const row of after) {
        expect(box.open({ sealed: row.sealed, context: presharedKeyContext({ a: row.agent_a, b: row.agent_b }) })).toBe(
          `${row.agent_a}/${row.agent_b}`,
        );
      }
      await server.server.stop();
    } finally {
      await cleanup();
    }
  }, 30_000);

  it('reseals what it can and fails the run naming the pairs whose key is no longer configured', async () => {
    const { db, cleanup } = await create();
    const [lostKey, oldKey, newKey] = [newMasterKey(), newMasterKey(), newMasterKey()];
    try {
      const lost = await startMeshTestServer({ db: keepOpen(db), masterKey: lostKey });
      await meshOfThree(lost);
      await pskOf(lost, 'bob', 'alice');
      await lost.server.stop();
      const old = await startMeshTestServer({ db: keepOpen(db), masterKey: oldKey, previousMasterKeys: [lostKey], agents: false });
      await pskOf(old, 'carol', 'alice');
      await old.server.stop();

      const rotated = await startMeshTestServer({
        db: keepOpen(db),
        masterKey: newKey,
        previousMasterKeys: [oldKey],
        jobs: { enabled: false },
        agents: false,
      });
      const service = rotated.server.kernel.service<MeshService>('agent-mesh');
      await expect(service.resealKeys()).rejects.toThrow(/^1 mesh PSK\(s\) could not be opened .*\(alice, bob\): .*not configured/);
      const box = createAesGcmSecretBox({ masterKey: newKey });
      expect((await sealedRows(db)).map((row) => box.needsReseal(row.sealed))).toEqual([true, false]);
      await rotated.server.stop();
    } finally {
      await cleanup();
    }
  }, 30_000);
});
