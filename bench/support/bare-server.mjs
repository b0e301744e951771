// The baseline server of bench/memory-http.ts: a bare Hono JSON route on
// @hono/node-server, the same HTTP stack agentinfra serves on, with no auth,
// validation or storage.
import { serve } from '@hono/node-server';
import { Hono } from 'hono';

const app = new Hono();
app.post('/bare', async (c) => {
  const body = await c.req.json();
  return c.json({ id: 'mem_bare', received: typeof body });
});
serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, (info) => {
  process.stdout.write(`listening on http://127.0.0.1:${info.port}\n`);
});
