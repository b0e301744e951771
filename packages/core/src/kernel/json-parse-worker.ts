import { type JsonTextOutcome, parseJsonBytes } from './json-text.js';

/**
 * The task of a JSON body parse thread (json-parse-pool.ts, piscina): one
 * body's bytes (a view of memory shared with the event loop) to its
 * {@link parseJsonBytes} outcome, whose value the event loop receives as a
 * structured clone.
 */
export default function parseInWorker(bytes: Uint8Array): JsonTextOutcome {
  return parseJsonBytes(bytes);
}
