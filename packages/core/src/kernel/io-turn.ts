import { setImmediate as immediate } from 'node:timers/promises';

/**
 * Resolves once the event loop has polled for I/O since the call: after two
 * `setImmediate` turns, since one `setImmediate` queued while I/O callbacks
 * run (the poll phase) fires in the same loop iteration, before any new
 * I/O is read. Work that continues after it does not add to the synchronous
 * work before it in one stall of the loop: a `/health` request that arrived
 * meanwhile is answered in between (#11).
 */
export async function nextIoTurn(): Promise<void> {
  await immediate();
  await immediate();
}
