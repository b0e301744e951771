import { describe, expect, it } from 'vitest';
import { postboxConfigSchema } from '../config.js';
import { WEBHOOK_JOB } from '../webhooks.js';
import { postboxJobs } from './postbox-jobs.js';

describe('postbox jobs', () => {
  // Review: the webhook job was cut at 60 s while the config accepted a 120 s delivery timeout.
  it('lets a webhook delivery run for the longest timeout the config accepts', () => {
    const longest = postboxConfigSchema.parse({ webhookTimeoutMs: 120_000 }).webhookTimeoutMs;
    expect(postboxConfigSchema.safeParse({ webhookTimeoutMs: longest + 1 }).success).toBe(false);
    const job = postboxJobs.find((definition) => definition.name === WEBHOOK_JOB);
    expect(job?.timeoutMs).toBeGreaterThan(longest);
  });
});
