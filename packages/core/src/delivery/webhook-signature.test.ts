import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { newWebhookSecret, signWebhook, webhookSigningKey } from './webhook-signature.js';

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
});
