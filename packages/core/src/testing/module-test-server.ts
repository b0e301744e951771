import type { SqlDatabase } from '../ports/sql-database.js';
import { seedAgentKeys, startTestKernel, type TestKernel, type TestResponse } from './test-kernel.js';

/** Who a {@link ModuleTestServer} call acts as: a seeded agent's device key, or an explicit credential (none: anonymous). */
export type CallAs<A extends string> = A | { credential?: string; headers?: Record<string, string> };

/** A test kernel with seeded agents and a shortcut to one module's routes. */
export interface ModuleTestServer<A extends string> {
  server: TestKernel;
  /** Each seeded agent's device key. */
  keys: Record<A, string>;
  /** The bridge key as call options. */
  bridge: { credential: string };
  /** POSTs to `<module>/<path>` as `as`. */
  // biome-ignore lint/suspicious/noExplicitAny: tests read response bodies field by field
  call<T = any>(path: string, body: unknown, as: CallAs<A>): Promise<TestResponse<T>>;
}

/**
 * Starts a test kernel (see {@link startTestKernel}; `listen: false` serves
 * calls through `app.request()` with no socket), then creates `agents` and
 * issues each a device key through the identity module, which `modules`
 * must include (unless `createAgents: false`: a restarted server whose store
 * has them gets new keys only). The one helper behind every module's test server.
 */
export async function startModuleTestServer<A extends string>(
  options: Parameters<typeof startTestKernel>[0] & { module: string; agents: readonly A[]; createAgents?: boolean },
): Promise<ModuleTestServer<A>> {
  const { module, agents, createAgents, ...kernelOptions } = options;
  const server = await startTestKernel(kernelOptions);
  const keys = await seedAgentKeys(server, agents, { create: createAgents !== false });
  return {
    server,
    keys,
    bridge: { credential: server.bridgeKey },
    call: (path, body, as) => server.call(`${module}/${path}`, body, typeof as === 'string' ? { credential: keys[as] } : as),
  };
}

/** `db` with a `close()` that does nothing, so a test can stop one kernel and start another on the same open database. */
export function keepOpen(db: SqlDatabase): SqlDatabase {
  return Object.assign(Object.create(db) as SqlDatabase, { close: async () => undefined });
}
