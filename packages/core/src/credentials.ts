import { createHash, hash, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * Credential and id primitives (CONTRACT.md "Credentials" and "Ids").
 * Tokens are a prefix plus 32 random bytes in base64url; only their SHA-256
 * is stored.
 */

/** Credential prefixes: bridge key, device key, delegation token, grant token. */
export type CredentialPrefix = 'bk_' | 'dk_' | 'dt_' | 'g_';

/** A new credential: `prefix` + base64url of 32 random bytes (43 characters). */
export function newCredential(prefix: CredentialPrefix): string {
  return prefix + randomBytes(32).toString('base64url');
}

/** Hex SHA-256 of a credential (UTF-8), the only form stored. Runs on every authenticated request: the one-shot `crypto.hash` allocates no Hash object. */
export function hashCredential(credential: string): string {
  return hash('sha256', credential, 'hex');
}

/** Constant-time string equality (compares SHA-256 digests, so lengths may differ). */
export function safeEqual(a: string, b: string): boolean {
  return equalsSecret(b)(a);
}

/**
 * A constant-time test against one fixed secret (e.g. the bridge key): its
 * SHA-256 is computed once, so each test hashes only the candidate.
 * @returns `(candidate) => candidate === secret`, in time independent of where they differ.
 */
export function equalsSecret(secret: string): (candidate: string) => boolean {
  const expected = createHash('sha256').update(secret, 'utf8').digest();
  return (candidate) => timingSafeEqual(createHash('sha256').update(candidate, 'utf8').digest(), expected);
}

/**
 * A new opaque, URL-safe id: `prefix` + 16 random bytes in base64url
 * (e.g. `mem_3q2…`). Prefixes per CONTRACT.md: `mem_`, `dev_`, `dlg_`, `art_`,
 * `grt_`, `msg_`, `job_`, `run_`, `hst_`.
 */
export function newId(prefix: string): string {
  return prefix + randomBytes(16).toString('base64url');
}
