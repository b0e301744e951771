import { randomBytes } from 'node:crypto';
import knex from 'knex';
import { type CoreConfigInput, coreConfigSchema } from '../config.js';
import { createLogger } from '../logger.js';
import type { SqlDatabase } from '../ports/sql-database.js';
import { createKernel, type KernelOptions } from './kernel.js';
import type { AnyModule } from './module.js';

/**
 * A kernel for tests that is never started (no migrations, no listener): its
 * SQL port is a knex instance that never connects, so only routes and
 * services that do not read the database can run, and `stop` only closes it.
 * @param options.config core settings on top of a fresh bridge key, master key and port 0.
 * @param options.adapters adapters besides `sql`.
 */
export function unstartedKernel(options: {
  modules: readonly AnyModule[];
  config?: Partial<CoreConfigInput>;
  adapters?: Omit<KernelOptions['adapters'], 'sql'>;
}) {
  const sql = { dialect: 'postgres', knex: knex({ client: 'pg' }), close: async () => undefined } as unknown as SqlDatabase;
  const config = coreConfigSchema.parse({
    bridgeKey: `bk_unstarted_${randomBytes(8).toString('hex')}`,
    masterKey: randomBytes(32).toString('base64'),
    port: 0,
    ...options.config,
  });
  return createKernel({
    config,
    modules: options.modules,
    adapters: { ...options.adapters, sql },
    logger: createLogger({ level: 'silent' }),
  });
}
