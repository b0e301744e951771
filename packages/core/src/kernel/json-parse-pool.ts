import { Piscina } from 'piscina';
import { workerScript } from '../threads/worker-script.js';
import { type JsonTextOutcome, parseJsonBytes } from './json-text.js';

/** Threads a pool starts at most: large bodies are rare, and the host has few cores to share with the event loop. */
export const JSON_PARSE_THREADS = 2;

/** Parses JSON body bytes in worker threads, started lazily. */
export interface JsonParsePool {
  /**
   * {@link parseJsonBytes} of `bytes` in a pool thread: the event loop only
   * posts the bytes and receives the value as a structured clone. Pass a view
   * of a `SharedArrayBuffer` (otherwise the bytes are copied into the
   * message); its content must not change until the promise settles. The
   * first call starts a thread. Parses on the event loop instead once the
   * pool is closed, or from the first time a thread failed (the body it held
   * is parsed again here, so no request fails).
   * @returns the same outcome as `parseJsonBytes(bytes)`; never rejects.
   */
  parse(bytes: Uint8Array): Promise<JsonTextOutcome>;
  /** Threads running now (0 until the first parse, after 30 s without work, and after `close`). */
  readonly threads: number;
  /** Ends every thread (bodies still being parsed finish on the event loop); resolves once all have exited. */
  close(): Promise<void>;
}

/**
 * Creates a piscina pool of at most `threads` (default
 * {@link JSON_PARSE_THREADS}) threads that parse JSON bodies off the event
 * loop (issue #11). No thread starts before the first
 * {@link JsonParsePool.parse}, threads stop after 30 s without work, and a
 * busy pool queues bodies.
 * @param options.onFailure called once, with the reason, the first time a
 *   thread fails (it could not start, threw or exited): the pool then parses
 *   every body on the event loop.
 * @param options.filename the thread script (tests pass one that fails); default json-parse-worker.
 */
export function createJsonParsePool(options?: {
  threads?: number;
  onFailure?: (reason: string) => void;
  filename?: string;
}): JsonParsePool {
  let pool: Piscina<Uint8Array, JsonTextOutcome> | undefined;
  let closed = false;
  let failed = false;
  /** The first failure ends the pool: its queued bodies are refused by piscina and parsed on the event loop. */
  const fail = (error: unknown) => {
    if (closed || failed) return;
    failed = true;
    void pool?.destroy();
    options?.onFailure?.(error instanceof Error ? error.message : String(error));
  };
  /** The piscina pool, made with the first large body: a kernel that never gets one (a CLI command) never builds it. */
  const started = () => {
    if (pool) return pool;
    const script = workerScript(import.meta.url, 'json-parse-worker');
    pool = new Piscina<Uint8Array, JsonTextOutcome>({
      filename: options?.filename ?? script.filename,
      execArgv: script.execArgv,
      minThreads: 0,
      maxThreads: Math.max(1, options?.threads ?? JSON_PARSE_THREADS),
      idleTimeout: 30_000,
    });
    // A thread that fails outside a task (its script throws while loading) is reported here, not to run().
    pool.on('error', fail);
    return pool;
  };
  return {
    async parse(bytes) {
      if (closed || failed) return parseJsonBytes(bytes);
      try {
        return await started().run(bytes);
      } catch (error) {
        fail(error);
        return parseJsonBytes(bytes);
      }
    },
    get threads() {
      return pool?.threads.length ?? 0;
    },
    async close() {
      closed = true;
      await pool?.destroy();
    },
  };
}
