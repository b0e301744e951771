import type { Server, ServerResponse } from 'node:http';

/** How often (ms) a draining server closes the keep-alive connections that have become idle. */
const IDLE_SWEEP_MS = 100;

/** Ends a server's keep-alive connections one response at a time once a shutdown starts. */
export interface ConnectionDrain {
  /**
   * Starts draining: every response not yet begun, in flight or still to
   * come on an open connection, is sent with `Connection: close` (RFC 9112
   * §9.6) and its connection closed after it; connections that are idle
   * now, or become idle, are closed every 100 ms until the server closes.
   * Idempotent.
   */
  drain(): void;
}

/**
 * Tracks `server`'s responses so that a shutdown can close busy keep-alive
 * connections after their current exchange, instead of serving new requests
 * on them until the grace period ends and resetting whatever is in flight then.
 */
export function trackConnectionDrain(server: Server): ConnectionDrain {
  const pending = new Set<ServerResponse>();
  let draining = false;
  server.prependListener('request', (_request, response: ServerResponse) => {
    if (draining) {
      response.shouldKeepAlive = false;
      return;
    }
    pending.add(response);
    response.once('close', () => pending.delete(response));
  });
  return {
    drain() {
      if (draining) return;
      draining = true;
      for (const response of pending) if (!response.headersSent) response.shouldKeepAlive = false;
      pending.clear();
      server.closeIdleConnections();
      const sweep = setInterval(() => server.closeIdleConnections(), IDLE_SWEEP_MS);
      sweep.unref();
      server.once('close', () => clearInterval(sweep));
    },
  };
}
