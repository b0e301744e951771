export { RedisAdapterError } from './redis-adapter-error.js';
export { createRedisAdapters, type RedisAdapters, type RedisAdaptersOptions } from './redis-adapters.js';
export { createRedisLock, type RedisLockOptions } from './redis-lock.js';
export { createRedisRateLimiter, type RedisRateLimiterOptions } from './redis-rate-limiter.js';
export { redactRedisUrl, redisUrlSchema } from './redis-url.js';
