import { randomBytes } from 'node:crypto';

/** `chars` random hex characters. */
const hex = (chars: number) => randomBytes(chars).toString('hex').slice(0, chars);
/** A `whsec_` secret of `bytes` random bytes. */
const whsec = (bytes: number) => `whsec_${randomBytes(bytes).toString('base64')}`;

const NOT_BASE64 = 'A whsec_ secret must be followed by standard base64 (A-Z a-z 0-9 + /, padded with =).';
const KEY_SIZE = 'A whsec_ secret must decode to 24–64 bytes.';
const RAW_LENGTH = 'A secret without the whsec_ prefix must be 16–512 characters.';
const RAW_ASCII = 'A secret without the whsec_ prefix must be printable ASCII characters only (space to ~).';

/** One caller-supplied signing secret and, when core's `webhookSecretSchema` refuses it, the field message expected. */
export interface WebhookSecretCase {
  name: string;
  secret: string;
  refused?: string;
}

/**
 * The boundary cases of core's `webhookSecretSchema` (CONTRACT.md "Signed
 * deliveries"), fresh random secrets on each call: every module that takes a
 * signing secret (the postbox's webhooks, the scheduler's jobs) must give the
 * same answers.
 */
export function webhookSecretCases(): WebhookSecretCase[] {
  return [
    { name: 'whsec_ of 23 bytes', secret: whsec(23), refused: KEY_SIZE },
    { name: 'whsec_ of 24 bytes', secret: whsec(24) },
    { name: 'whsec_ of 64 bytes', secret: whsec(64) },
    { name: 'whsec_ of 65 bytes', secret: whsec(65), refused: KEY_SIZE },
    { name: 'whsec_ and then not base64', secret: `whsec_${hex(32)}-_`, refused: NOT_BASE64 },
    { name: '15 raw characters', secret: hex(15), refused: RAW_LENGTH },
    { name: '16 raw characters', secret: hex(16) },
    { name: '512 raw characters', secret: hex(512) },
    { name: '513 raw characters', secret: hex(513), refused: RAW_LENGTH },
    { name: 'a raw secret with a non-ASCII character', secret: `${hex(20)}é`, refused: RAW_ASCII },
    { name: 'a raw secret with a control character', secret: `${hex(20)}\n`, refused: RAW_ASCII },
  ];
}

/** Random characters a case's secret starts with (after `whsec_`): an answer holding them repeats the secret. */
export function secretProbe(secret: string): string {
  return secret.replace(/^whsec_/, '').slice(0, 15);
}
