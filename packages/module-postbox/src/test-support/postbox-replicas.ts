import { createRedisAdapters, type RedisAdapters } from '@agentinfra/adapter-redis';
import { sqlDatabases, testRedisUrl } from '@agentinfra/testkit';
import { type PostboxTestServer, startPostboxTestServer } from './postbox-test-server.js';

/** Two postbox servers as two replicas: one PostgreSQL database, one Redis rate limiter (a fresh key prefix). */
export interface PostboxReplicas {
  replicas: [PostboxTestServer, PostboxTestServer];
  /** Stops both servers, closes their Redis connections and drops the database. */
  stop(): Promise<void>;
}

/**
 * Starts {@link PostboxReplicas} with `postboxConfig` on both (the first one
 * seeds the agents). Needs the PostgreSQL and Redis of the test services.
 */
export async function startPostboxReplicas(postboxConfig: Record<string, unknown>): Promise<PostboxReplicas> {
  const postgres = sqlDatabases().find((entry) => entry.name === 'postgres');
  if (!postgres) throw new Error('startPostboxReplicas needs the test PostgreSQL');
  const fixture = await postgres.create();
  const keyPrefix = `postbox-test-${Date.now()}-${Math.random().toString(36).slice(2)}:`;
  const redis: RedisAdapters[] = [];
  const servers: PostboxTestServer[] = [];
  for (let i = 0; i < 2; i += 1) {
    const adapters = await createRedisAdapters({ url: testRedisUrl(), keyPrefix });
    redis.push(adapters);
    servers.push(await startPostboxTestServer({ db: fixture.db, rateLimiter: adapters.rateLimiter, seed: i === 0, postboxConfig }));
  }
  return {
    replicas: servers as [PostboxTestServer, PostboxTestServer],
    async stop() {
      for (const server of [...servers].reverse()) await server.server.kernel.jobs.stop(0);
      await servers[1]?.stop().catch(() => undefined);
      await servers[0]?.stop().catch(() => undefined);
      for (const adapters of redis) await adapters.close();
      await fixture.cleanup();
    },
  };
}
