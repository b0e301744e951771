import { MeshCallError } from './host-error.js';
import { type MeshConnection, meshCall, meshConnection, parseInterval } from './mesh-connection.js';
import { stopSignal, waitOrStop } from './stop-signal.js';

/** Options of {@link runMeshHeartbeat}. */
export interface MeshHeartbeatOptions extends MeshConnection {
  /** Beat at this interval (`30s`, `1m`, …) until stopped; absent: one beat. */
  every?: string;
  /** Stops the loop (default: SIGINT or SIGTERM). */
  signal?: AbortSignal;
  /** Progress lines (default: stdout). */
  log?: (line: string) => void;
}

/** What {@link runMeshHeartbeat} did. */
export interface MeshHeartbeatResult {
  agent_id: string;
  /** `last_seen` of the last successful beat (ISO 8601 UTC); empty when none succeeded. */
  last_seen: string;
  /** Successful beats. */
  beats: number;
}

/**
 * `agentinfra mesh heartbeat`: POSTs /peer/heartbeat so the peer shows
 * online in other agents' /netmap. With `every`, beats at that interval
 * until SIGINT/SIGTERM (for a host's service manager): passing errors
 * (server unreachable, 429, 5xx) are logged and retried at the next beat,
 * refusals (401, 403, 404: not registered) end the run with exit code 1 so
 * the service manager shows the failure.
 * @throws MeshHostError (exit 2) for bad options; MeshCallError (exit 1) when the server refuses.
 */
export async function runMeshHeartbeat(options: MeshHeartbeatOptions): Promise<MeshHeartbeatResult> {
  const connection = meshConnection(options);
  const log = options.log ?? ((line: string) => process.stdout.write(`${line}\n`));
  const interval = options.every === undefined ? undefined : parseInterval(options.every, '--every');
  const body = connection.agent ? { agent_id: connection.agent } : {};
  const result: MeshHeartbeatResult = { agent_id: connection.agent ?? '', last_seen: '', beats: 0 };

  const beat = async (signal?: AbortSignal) => {
    const answer = await meshCall<{ agent_id: string; last_seen: string }>(connection, '/peer/heartbeat', body, { signal });
    result.agent_id = answer.agent_id;
    result.last_seen = answer.last_seen;
    result.beats += 1;
  };

  if (interval === undefined) {
    await beat();
    log(`heartbeat ${result.agent_id}: last_seen ${result.last_seen}`);
    return result;
  }
  const { signal, release } = stopSignal(options.signal);
  try {
    do {
      try {
        await beat(signal);
      } catch (error) {
        if (signal.aborted) break;
        if (!(error instanceof MeshCallError && error.transient)) throw error;
        log(`agentinfra mesh heartbeat: ${error.message}; retrying in ${options.every}`);
      }
    } while (await waitOrStop(interval, signal));
  } finally {
    release();
  }
  log(`heartbeat stopped after ${result.beats} beat${result.beats === 1 ? '' : 's'}`);
  return result;
}
