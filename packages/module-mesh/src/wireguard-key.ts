import { z } from 'zod';

/** Canonical base64 of 32 bytes: 43 characters, the last one carrying 4 zero bits, then one `=`. */
const BASE64_32_BYTES = /^[A-Za-z0-9+/]{42}[AEIMQUYcgkosw048]=$/;

/**
 * A WireGuard (Curve25519) public key as `wg pubkey` prints it: standard
 * base64 (RFC 4648 §4, with padding) of exactly 32 bytes. Anything else,
 * including base64url, missing padding or 31/33 bytes, is refused.
 */
export const wireguardKeySchema = z
  .string()
  .regex(BASE64_32_BYTES, 'must be base64 of exactly 32 bytes (a Curve25519 public key, as `wg pubkey` prints it)');
