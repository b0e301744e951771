import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { z } from 'zod';
import type { SecretBox } from '../ports/secret-box.js';

const masterKey = z.string().refine((value) => Buffer.from(value, 'base64').length === 32, 'must be base64 of exactly 32 bytes');

/** Options of {@link createAesGcmSecretBox}. */
export const aesGcmSecretBoxOptions = z.object({
  /** Current master key, base64 of 32 bytes. New seals use it. */
  masterKey,
  /** Earlier master keys (base64, 32 bytes) whose seals must still open during a rotation. */
  previousMasterKeys: z.array(masterKey).default([]),
});
export type AesGcmSecretBoxOptions = z.input<typeof aesGcmSecretBoxOptions>;

const FORMAT = 'sb1';
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** Key version: the first 8 bytes of SHA-256 over a label and the key, base64url (11 chars). */
function keyVersion(key: Buffer): string {
  return createHash('sha256').update('agentinfra-secret-box-key-id\0').update(key).digest().subarray(0, 8).toString('base64url');
}

/**
 * {@link SecretBox} with AES-256-GCM (NIST SP 800-38D): a fresh 96-bit IV per
 * seal, 128-bit tag, `context` as additional authenticated data.
 *
 * Sealed form: `sb1.<key version>.<base64url(iv ‖ ciphertext ‖ tag)>`, where
 * the key version is derived from the key itself, so rotating means setting a
 * new `masterKey` and moving the old one to `previousMasterKeys` until every
 * value is resealed.
 * @throws ZodError when a key is not base64 of 32 bytes.
 */
export function createAesGcmSecretBox(options: AesGcmSecretBoxOptions): SecretBox {
  const parsed = aesGcmSecretBoxOptions.parse(options);
  const current = Buffer.from(parsed.masterKey, 'base64');
  const currentVersion = keyVersion(current);
  const keys = new Map<string, Buffer>([[currentVersion, current]]);
  for (const previous of parsed.previousMasterKeys) {
    const key = Buffer.from(previous, 'base64');
    keys.set(keyVersion(key), key);
  }

  return {
    seal({ plaintext, context }) {
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv('aes-256-gcm', current, iv);
      cipher.setAAD(Buffer.from(context, 'utf8'));
      const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
      const payload = Buffer.concat([iv, ciphertext, cipher.getAuthTag()]).toString('base64url');
      return `${FORMAT}.${currentVersion}.${payload}`;
    },
    open({ sealed, context }) {
      const [format, version, payload] = sealed.split('.');
      if (format !== FORMAT || version === undefined || payload === undefined) {
        throw new Error('Sealed value has an unknown format.');
      }
      const key = keys.get(version);
      if (!key) throw new Error(`Sealed with master key version ${version}, which is not configured.`);
      const bytes = Buffer.from(payload, 'base64url');
      if (bytes.length < IV_BYTES + TAG_BYTES) throw new Error('Sealed value is truncated.');
      const decipher = createDecipheriv('aes-256-gcm', key, bytes.subarray(0, IV_BYTES));
      decipher.setAAD(Buffer.from(context, 'utf8'));
      decipher.setAuthTag(bytes.subarray(bytes.length - TAG_BYTES));
      try {
        return Buffer.concat([decipher.update(bytes.subarray(IV_BYTES, bytes.length - TAG_BYTES)), decipher.final()]).toString('utf8');
      } catch (cause) {
        throw new Error('Sealed value failed authentication (wrong key or context, or tampered).', { cause });
      }
    },
    needsReseal(sealed) {
      return sealed.split('.')[1] !== currentVersion;
    },
  };
}

/** A new random master key: base64 of 32 bytes. */
export function newMasterKey(): string {
  return randomBytes(32).toString('base64');
}
