import { Agent, request } from 'node:http';
import { defineModule, routesFor } from '@agentinfra/core';
import { startTestKernel } from '@agentinfra/core/testing';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { sqlDatabases } from './sql-databases.js';

const route = routesFor<null>();
/** Requests the `/slow` handler has begun. */
let slowStarted = 0;
/** While set, requests begun after the `after`-th wait for `release` instead of 300 ms. */
let hold: { after: number; release: Promise<void> } | null = null;
/** A route that answers after 300 ms: a request in flight when the shutdown starts. */
const slowModule = defineModule({
  name: 'agent-slow',
  ports: [],
  migrations: {},
  permissions: [],
  service: () => null,
  routes: [
    route({
      path: '/slow',
      summary: 'Answers after 300 ms.',
      request: z.strictObject({}),
      response: z.object({ ok: z.boolean() }),
      auth: { kind: 'none' },
      handler: async () => {
        slowStarted += 1;
        if (hold && slowStarted > hold.after) await hold.release;
        else await new Promise((resolve) => setTimeout(resolve, 300));
        return { ok: true };
      },
    }),
  ],
});

/** One request on `agent`; resolves with the status and the Connection header, or the socket error's code. */
function send(url: string, agent: Agent, path: string, method = 'GET') {
  return new Promise<{ status: number; connection: string | undefined } | { error: string }>((resolve) => {
    const outgoing = request(`${url}${path}`, { method, agent, headers: { 'content-type': 'application/json' } }, (response) => {
      response.resume();
      response.on('end', () => resolve({ status: response.statusCode ?? 0, connection: response.headers.connection }));
    });
    outgoing.on('error', (error: NodeJS.ErrnoException) => resolve({ error: error.code ?? error.message }));
    outgoing.end(method === 'POST' ? '{}' : undefined);
  });
}

// The grace is a minute: had the drain waited for it, the test would time out.
describe('kernel shutdown with busy keep-alive connections', () => {
  it('answers every request in flight, closes each connection after its exchange, and stops long before the grace', async () => {
    const [sqlite] = sqlDatabases();
    const fixture = await sqlite!.create();
    const server = await startTestKernel({
      modules: [slowModule],
      adapters: { sql: fixture.db },
      config: { http: { shutdownGraceMs: 60_000 } },
    });
    const busy = new Agent({ keepAlive: true, maxSockets: 1 });
    let release = () => {};
    hold = {
      after: slowStarted + 2,
      release: new Promise<void>((resolve) => {
        release = resolve;
      }),
    };
    try {
      // A client that reuses one connection back to back; the shutdown starts while its third
      // request is being answered (held in the handler until the stop has begun).
      const answers: Array<Awaited<ReturnType<typeof send>>> = [];
      const loop = (async () => {
        for (;;) {
          const answer = await send(server.url, busy, '/functions/v1/agent-slow/slow', 'POST');
          answers.push(answer);
          if ('error' in answer || answer.connection === 'close') return;
        }
      })();
      const third = hold.after + 1;
      await expect.poll(() => slowStarted, { timeout: 10_000, interval: 5 }).toBe(third);
      const stopping = server.kernel.stop();
      release();
      await loop;
      await stopping;
      expect(answers).toEqual([
        { status: 200, connection: 'keep-alive' },
        { status: 200, connection: 'keep-alive' },
        { status: 200, connection: 'close' },
      ]);
    } finally {
      release();
      hold = null;
      busy.destroy();
      await server.stop();
      await fixture.cleanup();
    }
  }, 15_000);

  it('answers /ready with 503 once the shutdown has begun', async () => {
    const [sqlite] = sqlDatabases();
    const fixture = await sqlite!.create();
    const server = await startTestKernel({ modules: [], adapters: { sql: fixture.db }, listen: false });
    try {
      expect((await server.kernel.app.request('/ready')).status).toBe(200);
      const stopping = server.kernel.stop();
      const ready = await server.kernel.app.request('/ready');
      expect(ready.status).toBe(503);
      expect(((await ready.json()) as { checks: Record<string, string> }).checks.shutdown).toBe('in progress');
      await stopping;
    } finally {
      await fixture.cleanup();
    }
  });
});
