import { describe, expect, it } from 'vitest';
import type { Embedder } from '../ports/embedder.js';
import type { HttpDelivery } from '../ports/http-delivery.js';
import { defineModule } from './module.js';
import { unstartedKernel } from './unstarted-kernel.test-support.js';

const embedder: Embedder = { id: 'test', dimensions: 2, embed: async ({ texts }) => texts.map(() => Float32Array.of(1, 0)) };
const delivery = { checkTarget: async () => undefined, send: async () => ({ ok: true, status: 200 }) } as unknown as HttpDelivery;

/** A module whose service is the embedder and delivery port it was given. */
const portsModule = defineModule({
  name: 'agent-ports',
  ports: ['embedder', 'delivery'],
  migrations: {},
  permissions: [],
  service: (deps) => ({ embedder: deps.embedder, delivery: deps.delivery }),
  routes: [],
});

const kernelWithMetrics = (enabled: boolean) =>
  unstartedKernel({ modules: [portsModule], config: { metrics: { enabled } }, adapters: { embedder, delivery } });

describe('metrics off', () => {
  it('hands modules the embedder and delivery adapters themselves, with no timing around each call', async () => {
    const off = kernelWithMetrics(false);
    expect(off.service<{ embedder: Embedder; delivery: HttpDelivery }>('agent-ports')).toEqual({ embedder, delivery });
    expect(off.service<{ embedder: Embedder }>('agent-ports').embedder).toBe(embedder);
    const on = kernelWithMetrics(true).service<{ embedder: Embedder; delivery: HttpDelivery }>('agent-ports');
    expect(on.embedder).not.toBe(embedder);
    expect(on.delivery).not.toBe(delivery);
    expect(await on.embedder.embed({ texts: ['a'] })).toEqual([Float32Array.of(1, 0)]);
  });
});
