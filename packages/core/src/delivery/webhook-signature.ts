import { createHmac, randomBytes } from 'node:crypto';
import { z } from 'zod';

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

/** Bytes a caller-supplied `whsec_` secret may decode to: Standard Webhooks' recommended key size (we generate 32). */
const WEBHOOK_SECRET_KEY_BYTES = { min: 24, max: 64 } as const;

/** Characters of a caller-supplied raw (not `whsec_`) secret, printable ASCII only. */
const RAW_WEBHOOK_SECRET_CHARS = { min: 16, max: 512 } as const;

/** Printable ASCII, space to `~`: the characters whose UTF-8 bytes every Standard Webhooks verifier's raw format reads alike. */
const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;

/**
 * Why a caller-supplied signing secret is refused, for a 400's field error;
 * `undefined` when it is usable. The text never contains the secret.
 */
function webhookSecretProblem(secret: string): string | undefined {
  if (secret.startsWith(WEBHOOK_SECRET_PREFIX)) {
    const encoded = secret.slice(WEBHOOK_SECRET_PREFIX.length);
    if (!BASE64.test(encoded)) return 'A whsec_ secret must be followed by standard base64 (A-Z a-z 0-9 + /, padded with =).';
    const bytes = Buffer.byteLength(encoded, 'base64');
    if (bytes < WEBHOOK_SECRET_KEY_BYTES.min || bytes > WEBHOOK_SECRET_KEY_BYTES.max) {
      return `A whsec_ secret must decode to ${WEBHOOK_SECRET_KEY_BYTES.min}–${WEBHOOK_SECRET_KEY_BYTES.max} bytes.`;
    }
    return undefined;
  }
  if (secret.length < RAW_WEBHOOK_SECRET_CHARS.min || secret.length > RAW_WEBHOOK_SECRET_CHARS.max) {
    return `A secret without the whsec_ prefix must be ${RAW_WEBHOOK_SECRET_CHARS.min}–${RAW_WEBHOOK_SECRET_CHARS.max} characters.`;
  }
  if (!PRINTABLE_ASCII.test(secret)) return 'A secret without the whsec_ prefix must be printable ASCII characters only (space to ~).';
  return undefined;
}

/**
 * A caller-supplied signing secret (CONTRACT.md "Signed deliveries"), used as given:
 * - `whsec_` + standard base64 (padded) decoding to 24–64 bytes, the HMAC key
 *   (what `new Webhook(secret)` of the Standard Webhooks libraries reads);
 * - or 16–512 printable ASCII characters whose bytes are the HMAC key
 *   (what `new Webhook(secret, { format: 'raw' })` reads).
 * Refusals are one issue on the field, whose message never contains the
 * secret; a value that is not a string gets only zod's type error. The JSON
 * Schema carries the rule as its description and the 16–512 length bounds
 * both forms keep.
 */
export const webhookSecretSchema = z
  .string()
  .superRefine((secret, ctx) => {
    const problem = webhookSecretProblem(secret);
    if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem });
  })
  .meta({
    minLength: RAW_WEBHOOK_SECRET_CHARS.min,
    maxLength: RAW_WEBHOOK_SECRET_CHARS.max,
    description:
      'Signing secret (Standard Webhooks), used as given: whsec_ + standard base64 of 24–64 bytes (the decoded bytes are the HMAC key), or 16–512 printable ASCII characters (the characters themselves are the key: verify with format "raw").',
  });

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
