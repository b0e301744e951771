import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { sampleOf } from './openapi-example.js';
import type { JsonSchema } from './openapi-schemas.js';

const NOW = Date.parse('2026-05-04T09:30:00.000Z');

/** The example `sampleOf` derives for a zod request schema, checked against it. */
function sample(schema: z.ZodType, module?: string): unknown {
  const json = z.toJSONSchema(schema, { io: 'input', target: 'draft-2020-12' }) as JsonSchema;
  const value = sampleOf(json, {}, { module, now: NOW });
  expect(schema.safeParse(value).success, JSON.stringify(value)).toBe(true);
  return value;
}

describe('sampleOf', () => {
  it('names agents alice and bob only in agent fields, and gives ids the prefix and shape newId gives', () => {
    const value = sample(
      z.strictObject({
        from_agent: z.string().regex(/^[a-z]+$/),
        to_agent: z.string(),
        artifact_ref: z.string().regex(/^art_[A-Za-z0-9_-]+$/),
        device_id: z.string().min(1).max(64),
        run_id: z.string().max(64),
        webhook_id: z.string().max(40),
      }),
    );
    expect(value).toEqual({
      from_agent: 'alice',
      to_agent: 'bob',
      artifact_ref: 'art_3q2ZP1kYfS5l0v8QnUu8Ww',
      device_id: 'dev_3q2ZP1kYfS5l0v8QnUu8Ww',
      run_id: 'run_3q2ZP1kYfS5l0v8QnUu8Ww',
      webhook_id: 'whk_3q2ZP1kYfS5l0v8QnUu8Ww',
    });
  });

  it('fills cadences, callback URLs, whsec_ secrets, mail addresses and instants relative to now', () => {
    const value = sample(
      z.strictObject({
        cadence: z.string().min(1),
        callback_url: z.string(),
        secret: z.string().max(512),
        from: z.string().min(3),
        to: z.string().min(3),
        subject: z.string(),
        body: z.string(),
        expires_at: z.iso.datetime(),
        since: z.iso.datetime(),
      }),
    ) as Record<string, string>;
    expect(value.cadence).toBe('0 9 * * 1');
    expect(value.callback_url).toMatch(/^https:\/\//);
    expect(value.secret).toMatch(/^whsec_[A-Za-z0-9+/]+={0,2}$/);
    expect(Buffer.from(value.secret!.slice('whsec_'.length), 'base64')).toHaveLength(32);
    expect(value.from).toBe('alice@localhost');
    expect(value.to).toBe('bob@example.com');
    expect(value.subject).toBe('Weekly status');
    expect(value.body).toMatch(/^Hi Bob,\n/);
    expect(value.expires_at).toBe('2026-08-02T00:00:00.000Z');
    expect(value.since).toBe('2026-04-27T00:00:00.000Z');
  });

  it("takes the module's meaning of a shared field name, and a pattern's first fitting candidate otherwise", () => {
    const request = z.strictObject({
      name: z.string().min(1),
      key: z.string().min(1),
      scope: z.array(z.string().regex(/^[a-z]+\.[a-z]+$/)),
    });
    expect(sample(request, 'agent-scheduler')).toEqual({ name: 'weekly-status', key: 'example', scope: ['memory.read'] });
    expect(sample(request, 'agent-memory')).toMatchObject({ name: 'project-facts', key: 'preferences/report-format' });
    expect(sample(z.strictObject({ ids: z.array(z.string().max(40)).min(1) }), 'agent-postbox')).toEqual({
      ids: ['msg_3q2ZP1kYfS5l0v8QnUu8Ww'],
    });
  });

  it('keeps named numbers within their bounds', () => {
    expect(sample(z.strictObject({ port: z.number().int().min(1).max(65_535), size: z.number().int().max(100) }))).toEqual({
      port: 8080,
      size: 1,
    });
  });
});
