import { randomBytes } from 'node:crypto';
import knex from 'knex';
import { describe, expect, it } from 'vitest';
import { coreConfigSchema } from '../config.js';
import { createLogger } from '../logger.js';
import type { Embedder } from '../ports/embedder.js';
import type { HttpDelivery } from '../ports/http-delivery.js';
import type { SqlDatabase } from '../ports/sql-database.js';
import { createKernel } from './kernel.js';
import { defineModule } from './module.js';

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

function kernelWithMetrics(enabled: boolean) {
  const sql = { dialect: 'postgres', knex: knex({ client: 'pg' }), close: async () => undefined } as unknown as SqlDatabase;
  const config = coreConfigSchema.parse({
    bridgeKey: 'bk_metrics_off_test',
    masterKey: randomBytes(32).toString('base64'),
    port: 0,
    metrics: { enabled },
  });
  return createKernel({ config, modules: [portsModule], adapters: { sql, embedder, delivery }, logger: createLogger({ level: 'silent' }) });
}

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
