/**
 * Rate limiter throughput: the exact sliding-window limiters against the
 * cheapest counter each store offers (baseline), measured in the same run.
 *
 *   npx tsx bench/rate-limiter.ts            (Redis from AGENTINFRA_REDIS_URL, default redis://127.0.0.1:6379)
 *
 * Rows: calls per second for sequential calls (one in flight) and for 50 calls
 * in flight; "vs baseline" = limiter ops/s ÷ baseline ops/s of the same store
 * and mode. Baseline for Redis: one `INCR` per call (a fixed-window counter,
 * not exact). Baseline for memory: a `Map` counter increment.
 */
import { randomUUID } from 'node:crypto';
import { createRedisAdapters } from '../packages/adapter-redis/src/index.js';
import type { RateLimiter } from '../packages/core/src/index.js';
import { createMemoryRateLimiter } from '../packages/core/src/index.js';

interface Row {
  store: string;
  operation: string;
  mode: string;
  opsPerSecond: number;
  baseline: number;
}

/** Runs `call` `total` times with `inFlight` calls outstanding; returns calls per second. */
async function measure(total: number, inFlight: number, call: (index: number) => Promise<unknown>): Promise<number> {
  let next = 0;
  const startedAt = performance.now();
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (next < total) {
        const index = next;
        next += 1;
        await call(index);
      }
    }),
  );
  return total / ((performance.now() - startedAt) / 1000);
}

const rows: Row[] = [];
const modes = [
  { name: 'sequential', inFlight: 1 },
  { name: '50 in flight', inFlight: 50 },
];

async function benchLimiter(store: string, limiter: RateLimiter, total: number, baseline: (index: number) => Promise<unknown>) {
  for (const mode of modes) {
    const baselineOps = await measure(total, mode.inFlight, baseline);
    rows.push({ store, operation: 'baseline counter', mode: mode.name, opsPerSecond: baselineOps, baseline: baselineOps });
    const allowedKey = `bench:allowed:${randomUUID()}`;
    const allowedOps = await measure(total, mode.inFlight, () => limiter.consume({ key: allowedKey, limit: 1_000_000, windowMs: 60_000 }));
    rows.push({ store, operation: 'consume (allowed)', mode: mode.name, opsPerSecond: allowedOps, baseline: baselineOps });
    const fullKey = `bench:full:${randomUUID()}`;
    await limiter.consume({ key: fullKey, limit: 100, windowMs: 60_000, cost: 100 });
    const refusedOps = await measure(total, mode.inFlight, () => limiter.consume({ key: fullKey, limit: 100, windowMs: 60_000 }));
    rows.push({ store, operation: 'consume (refused)', mode: mode.name, opsPerSecond: refusedOps, baseline: baselineOps });
    const manyKey = `bench:many:${randomUUID()}`;
    for (let index = 0; index < 1000; index += 1) await limiter.consume({ key: manyKey, limit: 1000, windowMs: 60_000 });
    const refusedManyOps = await measure(total, mode.inFlight, () =>
      limiter.consume({ key: manyKey, limit: 1000, windowMs: 60_000, cost: 10 }),
    );
    rows.push({
      store,
      operation: 'consume (refused, 1000 entries in window)',
      mode: mode.name,
      opsPerSecond: refusedManyOps,
      baseline: baselineOps,
    });
  }
}

const counters = new Map<string, number>();
await benchLimiter('memory', createMemoryRateLimiter(), 200_000, async (index) => {
  const key = `k${index % 100}`;
  counters.set(key, (counters.get(key) ?? 0) + 1);
});

const url = process.env.AGENTINFRA_REDIS_URL ?? 'redis://127.0.0.1:6379';
const keyPrefix = `agentinfra-bench:${randomUUID()}:`;
let redisNote = '';
try {
  const redis = await createRedisAdapters({ url, keyPrefix, connectTimeoutMs: 2_000 });
  const counterKey = `${keyPrefix}incr`;
  await benchLimiter('redis', redis.rateLimiter, 10_000, () => redis.client.incr(counterKey));
  for await (const keys of redis.client.scanIterator({ MATCH: `${keyPrefix}*`, COUNT: 500 })) {
    if (keys.length > 0) await redis.client.unlink(keys);
  }
  await redis.close();
} catch (error) {
  redisNote = `Redis rows skipped: ${error instanceof Error ? error.message : String(error)}`;
}

console.log('| store | operation | mode | ops/s | vs baseline |');
console.log('|---|---|---|---:|---:|');
for (const row of rows) {
  const ratio = (row.opsPerSecond / row.baseline).toFixed(2);
  console.log(`| ${row.store} | ${row.operation} | ${row.mode} | ${Math.round(row.opsPerSecond).toLocaleString('en-US')} | ${ratio}× |`);
}
if (redisNote !== '') console.log(`\n${redisNote}`);
