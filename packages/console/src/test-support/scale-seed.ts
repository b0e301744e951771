import { createHash } from 'node:crypto';
import type { IdentityService } from '@agentinfra/module-identity';
import type { MeshService } from '@agentinfra/module-mesh';
import { putJobRequestSchema, type SchedulerService } from '@agentinfra/module-scheduler';
import type { ConsoleTestServer } from './console-test-server.js';

/** Runs `work` for 0..count-1, `width` at a time. */
export async function inBatches(count: number, width: number, work: (index: number) => Promise<unknown>): Promise<void> {
  for (let start = 0; start < count; start += width) {
    await Promise.all(Array.from({ length: Math.min(width, count - start) }, (_, offset) => work(start + offset)));
  }
}

/** `job-01` … for `job-60`: names that sort in number order. */
export function jobName(index: number): string {
  return `job-${String(index + 1).padStart(2, '0')}`;
}

/**
 * Creates `count` hourly jobs of alice ({@link jobName}), whose callbacks go nowhere (they do not fire within a test),
 * through the scheduler's service in-process with the body its /job/put route parses (the route is tested in
 * packages/module-scheduler).
 */
export async function seedJobs(t: ConsoleTestServer, count: number): Promise<void> {
  const scheduler = t.server.kernel.service<SchedulerService>('agent-scheduler');
  await inBatches(count, 10, (index) =>
    scheduler.putJob(
      putJobRequestSchema.parse({
        agent_id: 'alice',
        name: jobName(index),
        cadence: '@every 1h',
        callback_url: 'http://127.0.0.1:9/hooks/scheduler',
        secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
      }),
    ),
  );
}

/** `peer-001` … for `peer-400`. */
export function peerName(index: number): string {
  return `peer-${String(index + 1).padStart(3, '0')}`;
}

/** The (from, to) peer indices of the ACLs {@link seedMesh} puts: from each peer to three others, `perPeer` at most. */
export function meshAcls(peers: number, perPeer = 3): Array<[number, number]> {
  return Array.from({ length: peers }, (_, from) =>
    [1, 7, 31].slice(0, perPeer).map((step) => [from, (from + step) % peers] as [number, number]),
  ).flat();
}

/**
 * Creates `peers` agents and registers them as mesh peers ({@link peerName}, endpoint 192.0.2.1:51820) and the ACLs
 * of {@link meshAcls} (port 22/tcp, `perPeer` from each peer, as the operator puts them); returns the ACL count.
 * Seeds through the identity and mesh services in-process, `width` calls at a time: the seed is not what the console
 * tests test (how the mesh routes register peers and put ACLs is tested in packages/module-mesh), and thousands of
 * HTTP calls made it the larger part of their CPU time.
 */
export async function seedMesh(t: ConsoleTestServer, peers: number, perPeer = 3, width = 8): Promise<number> {
  const identity = t.server.kernel.service<IdentityService>('agent-identity');
  const mesh = t.server.kernel.service<MeshService>('agent-mesh');
  // Fixed keys: a SHA-256 per peer.
  const key = (index: number) => createHash('sha256').update(`peer key ${index}`).digest('base64');
  await inBatches(peers, width, (index) => identity.createAgent({ agent_id: peerName(index), display_name: 'Peer' }));
  await inBatches(peers, width, (index) =>
    mesh.registerPeer({ agent_id: peerName(index), pubkey: key(index), endpoint: '192.0.2.1:51820' }),
  );
  const acls = meshAcls(peers, perPeer);
  await inBatches(acls.length, width, (index) => {
    const [from, to] = acls[index] as [number, number];
    return mesh.putAcl({ from_agent: peerName(from), to_agent: peerName(to), port: 22, proto: 'tcp' }, null);
  });
  return acls.length;
}
