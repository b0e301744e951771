import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { newWebhookSecret, signWebhook, webhookSecretSchema, webhookSigningKey } from './webhook-signature.js';

const headersOf = (messageId: string, timestampSeconds: number, signature: string) => ({
  'webhook-id': messageId,
  'webhook-timestamp': String(timestampSeconds),
  'webhook-signature': signature,
});

describe('Standard Webhooks signatures', () => {
  const now = () => Math.floor(Date.now() / 1000);
  const body = JSON.stringify({ type: 'job.run', timestamp: new Date().toISOString(), data: { run_id: 'run_1', n: 'é ✓' } });

  it('newWebhookSecret makes whsec_ + base64 of 32 random bytes', () => {
    const secret = newWebhookSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(secret.slice(6), 'base64')).toHaveLength(32);
    expect(newWebhookSecret()).not.toBe(secret);
  });

  it('is accepted by the standardwebhooks verifier, and the payload comes back parsed', () => {
    const secret = newWebhookSecret();
    const timestamp = now();
    const signature = signWebhook({ secrets: [secret], messageId: 'msg_1', timestampSeconds: timestamp, body });
    expect(signature).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
    expect(new Webhook(secret).verify(body, headersOf('msg_1', timestamp, signature))).toEqual(JSON.parse(body));
  });

  it('signs with every active secret, space-separated; each secret alone verifies (rotation window)', () => {
    const [oldSecret, newSecret] = [newWebhookSecret(), newWebhookSecret()];
    const timestamp = now();
    const signature = signWebhook({ secrets: [oldSecret, newSecret], messageId: 'msg_2', timestampSeconds: timestamp, body });
    expect(signature.split(' ')).toHaveLength(2);
    for (const secret of [oldSecret, newSecret]) {
      expect(() => new Webhook(secret).verify(body, headersOf('msg_2', timestamp, signature))).not.toThrow();
    }
    expect(() => new Webhook(newWebhookSecret()).verify(body, headersOf('msg_2', timestamp, signature))).toThrow(/No matching signature/);
  });

  it('a changed body, id or timestamp fails verification', () => {
    const secret = newWebhookSecret();
    const timestamp = now();
    const signature = signWebhook({ secrets: [secret], messageId: 'msg_3', timestampSeconds: timestamp, body });
    const hook = new Webhook(secret);
    expect(() => hook.verify(`${body} `, headersOf('msg_3', timestamp, signature))).toThrow();
    expect(() => hook.verify(body, headersOf('msg_4', timestamp, signature))).toThrow();
    expect(() => hook.verify(body, headersOf('msg_3', timestamp + 1, signature))).toThrow();
  });

  it('a raw (non-whsec_) secret signs with its bytes, as the verifier format "raw" expects', () => {
    const secret = 'plain-shared-secret';
    const timestamp = now();
    const signature = signWebhook({ secrets: [secret], messageId: 'msg_5', timestampSeconds: timestamp, body });
    expect(() => new Webhook(secret, { format: 'raw' }).verify(body, headersOf('msg_5', timestamp, signature))).not.toThrow();
  });

  it('refuses malformed secrets without echoing them', () => {
    expect(() => webhookSigningKey('whsec_not base64!')).toThrow('A whsec_ signing secret must be followed by standard base64.');
    expect(() => webhookSigningKey('whsec_')).toThrow(/standard base64/);
    expect(() => webhookSigningKey('')).toThrow(/must not be empty/);
    expect(() => signWebhook({ secrets: [], messageId: 'x', timestampSeconds: 1, body: '' })).toThrow(/At least one/);
  });

  it('webhookSecretSchema takes what the verifiers read alike: whsec_ + base64 of 24–64 bytes, or 16–512 printable ASCII', () => {
    const whsec = (bytes: number) => `whsec_${randomBytes(bytes).toString('base64')}`;
    const accepted = [newWebhookSecret(), whsec(24), whsec(64), 'x'.repeat(16), ' ~'.repeat(256)];
    for (const secret of accepted) expect(webhookSecretSchema.safeParse(secret).success, secret).toBe(true);
    const refused = [
      whsec(23),
      whsec(65),
      'whsec_',
      `whsec_-_${randomBytes(30).toString('base64url').slice(2)}`,
      'x'.repeat(15),
      'x'.repeat(513),
    ];
    for (const secret of [...refused, `${'x'.repeat(20)}é`, `${'x'.repeat(20)}\t`, `${'x'.repeat(20)}\u007f`]) {
      const parsed = webhookSecretSchema.safeParse(secret);
      expect(parsed.success, secret).toBe(false);
      expect(parsed.error?.issues, secret).toEqual([{ code: 'custom', path: [], message: expect.any(String) }]);
      if (secret !== 'whsec_') expect(parsed.error?.issues[0]?.message, secret).not.toContain(secret);
    }
    // Every secret accepted signs verifiably: a whsec_ one as given, a raw one with format "raw".
    const timestamp = now();
    for (const secret of accepted) {
      const signature = signWebhook({ secrets: [secret], messageId: 'msg_6', timestampSeconds: timestamp, body });
      const hook = secret.startsWith('whsec_') ? new Webhook(secret) : new Webhook(secret, { format: 'raw' });
      expect(() => hook.verify(body, headersOf('msg_6', timestamp, signature)), secret).not.toThrow();
    }
  });

  it('webhookSecretSchema documents the rule in its JSON Schema', () => {
    expect(z.toJSONSchema(webhookSecretSchema)).toMatchObject({
      type: 'string',
      minLength: 16,
      maxLength: 512,
      description: expect.stringContaining('whsec_ + standard base64 of 24–64 bytes'),
    });
  });
});
