import type { SqlDatabase } from '@agentinfra/core';
import { sqlDatabases } from '@agentinfra/testkit';
import { describe, expect, it } from 'vitest';
import { startGatewayTestServer } from './test-support/gateway-test-server.js';

/** `db`, with `hook.before` (when set, once) run before the next transaction begins. */
function withHookBeforeTransaction(db: SqlDatabase, hook: { before: (() => Promise<void>) | null }): SqlDatabase {
  const knex = new Proxy(db.knex, {
    get(target, property, receiver) {
      if (property !== 'transaction') return Reflect.get(target, property, receiver);
      return async (...args: Parameters<typeof target.transaction>) => {
        const before = hook.before;
        hook.before = null;
        if (before) await before();
        return target.transaction(...args);
      };
    },
  });
  return Object.create(db, { knex: { value: knex } }) as SqlDatabase;
}

/**
 * /cert/issue names a host, not one binding of it: when the host is released and bound again between the
 * route's first read and the transaction that stores the order, the order is for the binding in force then,
 * not a 404 saying the host is not bound. No CA is called (jobs are off).
 */
describe.each(sqlDatabases())('agent-gateway order requested while its host is re-bound on $name', ({ create }) => {
  it('orders for the binding in force when the host was re-bound mid-call', async () => {
    const { db, cleanup } = await create();
    const hook: { before: (() => Promise<void>) | null } = { before: null };
    const test = await startGatewayTestServer({
      db: withHookBeforeTransaction(db, hook),
      gateway: { dnsServers: ['127.0.0.1:9'], httpPort: 0, directoryUrl: 'https://127.0.0.1:9/dir' },
      jobs: { enabled: false },
    });
    const host = 'rebound.example.test';
    const binding = (hostId: string, agentId: string) => ({
      host,
      host_id: hostId,
      agent_id: agentId,
      bound_at: Date.now(),
      ips: '[]',
      ips_updated_at: null,
    });
    try {
      await db.knex('gateway_hosts').insert(binding('hst_first', 'alice'));
      hook.before = async () => {
        await db.knex('gateway_hosts').where({ host }).delete();
        await db.knex('gateway_hosts').insert(binding('hst_second', 'bob'));
      };
      const issued = await test.gateway('/cert/issue', { host }, 'bridge');
      expect(hook.before).toBeNull();
      expect(issued.status, JSON.stringify(issued.body)).toBe(200);
      expect(await db.knex('gateway_orders').where({ order_id: issued.body.order_id }).first()).toMatchObject({
        host,
        host_id: 'hst_second',
        agent_id: 'bob',
        status: 'queued',
      });
    } finally {
      await test.server.stop();
      await cleanup();
    }
  });
});
