import { createHash } from 'node:crypto';
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

/** Creates `count` hourly jobs of alice ({@link jobName}), whose callbacks go nowhere (they do not fire within a test). */
export async function seedJobs(t: ConsoleTestServer, count: number): Promise<void> {
  await inBatches(count, 10, (index) =>
    t.bridge('agent-scheduler/job/put', {
      agent_id: 'alice',
      name: jobName(index),
      cadence: '@every 1h',
      callback_url: 'http://127.0.0.1:9/hooks/scheduler',
      secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
    }),
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

/** Creates `peers` agents and registers them as mesh peers ({@link peerName}) and the ACLs of {@link meshAcls} (port 22/tcp); returns the ACL count. */
export async function seedMesh(t: ConsoleTestServer, peers: number): Promise<number> {
  // Fixed keys: a SHA-256 per peer.
  const key = (index: number) => createHash('sha256').update(`peer key ${index}`).digest('base64');
  await inBatches(peers, 16, (index) => t.bridge('agent-identity/agents/create', { agent_id: peerName(index), display_name: 'Peer' }));
  // agent-mesh's /peer/register answers 500 now and then on a loaded machine (about one in a few hundred, on
  // SQLite, also one at a time; not a console matter): registering is idempotent, so such a one is tried again once.
  const register = (index: number) =>
    t.bridge('agent-mesh/peer/register', { agent_id: peerName(index), pubkey: key(index), endpoint: '192.0.2.1:51820' });
  await inBatches(peers, 16, (index) => register(index).catch(() => register(index)));
  const acls = meshAcls(peers);
  await inBatches(acls.length, 16, (index) => {
    const [from, to] = acls[index] as [number, number];
    return t.bridge('agent-mesh/acl/put', { from_agent: peerName(from), to_agent: peerName(to), port: 22, proto: 'tcp' });
  });
  return acls.length;
}
