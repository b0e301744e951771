import { lowerBackgroundThreadPriority } from '../threads/background-priority.js';
import { type JsonTextOutcome, parseJsonBytes } from './json-text.js';

// A large body may wait for the event loop's turn, never the other way round.
lowerBackgroundThreadPriority();

/**
 * The task of a JSON body parse thread (json-parse-pool.ts, piscina): one
 * body's bytes (a view of memory shared with the event loop) to its
 * {@link parseJsonBytes} outcome, whose value the event loop receives as a
 * structured clone.
 */
export default function parseInWorker(bytes: Uint8Array): JsonTextOutcome {
  return parseJsonBytes(bytes);
}
