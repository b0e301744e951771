import { nextIoTurn } from '@agentinfra/core';

/**
 * Message bytes the SMTP listener takes in per turn of the event loop, over
 * all its sessions (#11). libuv reads up to 32 chunks of 64 KiB from each
 * ready socket per turn: eight clients sending 10 MiB mails at once used to
 * bring 10+ MiB into one turn, and copying them (smtp-server's line
 * scanning, then the message buffer) held the loop for 40–60 ms.
 */
export const SMTP_BYTES_PER_TURN = 512 * 1024;

/** Paces how fast message bytes are taken in (see {@link createReadPacing}). */
export interface ReadPacing {
  /**
   * Counts `bytes` just taken in; when this turn's budget is spent, pauses
   * `stream` until the loop has polled for I/O once more (then resumes it).
   */
  took(bytes: number, stream: { pause(): unknown; resume(): unknown }): void;
}

/**
 * A byte budget per event-loop turn shared by every stream it paces: a
 * stream that takes in bytes once the budget is spent is paused, so its
 * sender meets TCP backpressure, and resumed after the next poll for I/O,
 * when the budget is new again.
 * @param bytesPerTurn the budget; a turn's first chunk is always taken in, however large.
 */
export function createReadPacing(bytesPerTurn: number): ReadPacing {
  let taken = 0;
  let counting = false;
  return {
    took(bytes, stream) {
      if (!counting) {
        counting = true;
        // The check phase ends this turn's count: the next turn starts afresh.
        setImmediate(() => {
          counting = false;
          taken = 0;
        });
      }
      taken += bytes;
      if (taken < bytesPerTurn) return;
      stream.pause();
      void nextIoTurn().then(() => stream.resume());
    },
  };
}
