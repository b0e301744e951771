import { describe, expect, it } from 'vitest';
import { redactRedisUrl, redisUrlSchema } from './redis-url.js';

describe('redactRedisUrl', () => {
  it('hides the password and keeps the rest', () => {
    expect(redactRedisUrl('redis://app:s3cret@cache.internal:6380/2')).toBe('redis://app:***@cache.internal:6380/2');
    expect(redactRedisUrl('rediss://:s3cret@cache')).toBe('rediss://:***@cache');
    expect(redactRedisUrl('redis://127.0.0.1:6379')).toBe('redis://127.0.0.1:6379');
  });

  it('prints nothing of input that is not a URL', () => {
    expect(redactRedisUrl('not a url s3cret')).toBe('(unparseable Redis URL)');
  });
});

describe('redisUrlSchema', () => {
  it('accepts redis and rediss URLs with an optional database number', () => {
    for (const url of ['redis://127.0.0.1:6379', 'redis://localhost/3', 'rediss://u:p@cache:6380/']) {
      expect(redisUrlSchema.safeParse(url).success).toBe(true);
    }
  });

  it('refuses other schemes, missing hosts and non-numeric databases without echoing the URL', () => {
    for (const url of ['http://localhost', 'redis://', 'redis://u:s3cret@localhost/abc', 'nonsense']) {
      const parsed = redisUrlSchema.safeParse(url);
      expect(parsed.success).toBe(false);
      expect(JSON.stringify(parsed.error)).not.toContain('s3cret');
    }
  });
});
