import { createHmac, randomBytes } from 'node:crypto';

/** Prefix of Standard Webhooks secrets. */
export const WEBHOOK_SECRET_PREFIX = 'whsec_';

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/**
 * A new signing secret: `whsec_` + standard base64 of 32 random bytes
 * (CONTRACT.md "Signed deliveries": 24 to 64 bytes; Standard Webhooks format).
 */
export function newWebhookSecret(): string {
  return WEBHOOK_SECRET_PREFIX + randomBytes(32).toString('base64');
}

/**
 * The HMAC key of a signing secret, as the Standard Webhooks verifiers derive it:
 * - `whsec_<base64>`: the base64-decoded bytes (what `new Webhook(secret)` uses);
 * - any other string: its UTF-8 bytes (what `new Webhook(secret, { format: 'raw' })`
 *   uses for ASCII secrets).
 * @throws Error when a `whsec_` secret is not valid base64 or decodes to nothing
 *   (the message never contains the secret).
 */
export function webhookSigningKey(secret: string): Buffer {
  if (secret.startsWith(WEBHOOK_SECRET_PREFIX)) {
    const encoded = secret.slice(WEBHOOK_SECRET_PREFIX.length);
    if (encoded === '' || !BASE64.test(encoded)) throw new Error('A whsec_ signing secret must be followed by standard base64.');
    return Buffer.from(encoded, 'base64');
  }
  if (secret === '') throw new Error('A signing secret must not be empty.');
  return Buffer.from(secret, 'utf8');
}

/**
 * Standard Webhooks signature header value: `v1,<base64 HMAC-SHA256 over "<id>.<timestamp>.<body>">`
 * for each secret, space-separated (several during a rotation window).
 * @param options.timestampSeconds Unix seconds, as sent in `webhook-timestamp`.
 * @param options.body the exact request body bytes as a string.
 * @throws Error when `secrets` is empty or a secret is malformed (see {@link webhookSigningKey}).
 */
export function signWebhook(options: { secrets: readonly string[]; messageId: string; timestampSeconds: number; body: string }): string {
  if (options.secrets.length === 0) throw new Error('At least one signing secret is required.');
  const signed = `${options.messageId}.${options.timestampSeconds}.${options.body}`;
  return options.secrets
    .map((secret) => `v1,${createHmac('sha256', webhookSigningKey(secret)).update(signed, 'utf8').digest('base64')}`)
    .join(' ');
}
