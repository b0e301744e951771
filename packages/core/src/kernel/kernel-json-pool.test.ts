import { Piscina } from 'piscina';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { OFF_THREAD_JSON_BYTES } from './json-body.js';
import { defineModule } from './module.js';
import { routesFor } from './route.js';
import { unstartedKernel } from './unstarted-kernel.test-support.js';

afterEach(() => vi.restoreAllMocks());

const received: unknown[] = [];
const route = routesFor<null>();
const echoModule = defineModule({
  name: 'agent-echo',
  ports: [],
  migrations: {},
  permissions: [],
  service: () => null,
  routes: [
    route({
      path: '/put',
      summary: 'Keeps a text.',
      request: z.strictObject({ text: z.string() }),
      response: z.object({ length: z.number() }),
      auth: { kind: 'none' },
      handler: async ({ body }) => {
        received.push(body.text);
        return { length: body.text.length };
      },
    }),
  ],
});

const unstarted = () => unstartedKernel({ modules: [echoModule] });

const post = (kernel: ReturnType<typeof unstarted>, text: string) =>
  kernel.app.request('/functions/v1/agent-echo/put', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ text }),
  });

describe('the kernel JSON parse pool', () => {
  it('sends only a large body to the parse threads, and ends them on stop', async () => {
    const posted = vi.spyOn(Piscina.prototype, 'run');
    const terminated = vi.spyOn(Piscina.prototype, 'destroy');
    const kernel = unstarted();
    const small = await post(kernel, 'hello');
    expect(await small.json()).toEqual({ length: 5 });
    expect(posted).not.toHaveBeenCalled();
    const text = 'é'.repeat(OFF_THREAD_JSON_BYTES);
    const large = await post(kernel, text);
    expect(await large.json()).toEqual({ length: text.length });
    expect(received.at(-1)).toBe(text);
    expect(posted).toHaveBeenCalledTimes(1);
    expect(terminated).not.toHaveBeenCalled();
    await kernel.stop();
    expect(terminated).toHaveBeenCalledTimes(1);
  });
});
