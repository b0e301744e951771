import type { HttpMount, Kernel, KernelSurface } from '@agentinfra/core';
import { createConsoleApp } from './app.js';
import { createSessionStore } from './sessions.js';

/** Options of {@link consoleSurface}. */
export interface ConsoleSurfaceOptions {
  /** Mount path (default `/console`). */
  path?: string;
  /** A session ends after this long without a request (default 30 minutes). */
  idleMs?: number;
  /** A session ends this long after sign-in however busy (default 12 hours). */
  maxAgeMs?: number;
  /** Sessions kept at once (default 1,000); a sign-in past it ends the session idle longest. */
  maxSessions?: number;
  /** Largest form body in bytes (default 64 KiB); 413 above. */
  bodyLimitBytes?: number;
}

/**
 * The operator console at `/console`: server-rendered pages signed in with
 * the bridge key, acting through the API's own routes. Sessions live in
 * this process's memory (a restart signs operators out).
 */
export function consoleSurface(options: ConsoleSurfaceOptions = {}): KernelSurface {
  return (kernel: Kernel): HttpMount => {
    const path = options.path ?? '/console';
    const idleMs = options.idleMs ?? 30 * 60_000;
    const limit = options.bodyLimitBytes ?? 64 * 1024;
    const app = createConsoleApp({
      kernel,
      base: path,
      sessions: createSessionStore({ idleMs, maxAgeMs: options.maxAgeMs, maxSessions: options.maxSessions }),
    });
    return {
      path,
      async fetch(request, body, info) {
        let forwarded = request;
        if (request.method === 'POST') {
          const parts: Uint8Array[] = [];
          let size = 0;
          for await (const chunk of body) {
            size += chunk.byteLength;
            if (size > limit) return new Response('Form too large.', { status: 413, headers: { connection: 'close' } });
            parts.push(chunk);
          }
          forwarded = new Request(request.url, { method: 'POST', headers: request.headers, body: Buffer.concat(parts) });
        }
        return app.fetch(forwarded, { client: info?.client });
      },
    };
  };
}
