import { createPublicKey, diffieHellman, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { z } from 'zod';

/** Canonical base64 of 32 bytes: 43 characters, the last one carrying 4 zero bits, then one `=`. */
const BASE64_32_BYTES = /^[A-Za-z0-9+/]{42}[AEIMQUYcgkosw048]=$/;

/** DER prefix of an X25519 SubjectPublicKeyInfo (RFC 8410): the 32 key bytes follow. */
const X25519_SPKI_PREFIX = Buffer.from('302a300506032b656e032100', 'hex');

/** A private key of this process, only to try a key agreement with a peer's public key. */
let probe: KeyObject | undefined;

/**
 * Whether `key` (32 bytes, base64) is a Curve25519 point a handshake can use:
 * an X25519 agreement with it (RFC 7748 §6.1) does not give the all-zero
 * secret, which OpenSSL refuses. The all-zero key and the other points of
 * small order (RFC 7748 §7) fail, as they fail every WireGuard handshake.
 */
function agreesOnASecret(key: string): boolean {
  probe ??= generateKeyPairSync('x25519').privateKey;
  try {
    const publicKey = createPublicKey({
      key: Buffer.concat([X25519_SPKI_PREFIX, Buffer.from(key, 'base64')]),
      format: 'der',
      type: 'spki',
    });
    diffieHellman({ privateKey: probe, publicKey });
    return true;
  } catch {
    return false;
  }
}

/**
 * A WireGuard (Curve25519) public key as `wg pubkey` prints it: standard
 * base64 (RFC 4648 §4, with padding) of exactly 32 bytes. Anything else,
 * including base64url, missing padding or 31/33 bytes, is refused, and so
 * are the all-zero key and the other low-order points, with which no
 * handshake can complete (a peer registered with one is unreachable).
 */
export const wireguardKeySchema = z
  .string()
  .regex(BASE64_32_BYTES, {
    message: 'must be base64 of exactly 32 bytes (a Curve25519 public key, as `wg pubkey` prints it)',
    abort: true,
  })
  .refine(agreesOnASecret, 'is a low-order Curve25519 point (such as all zeros), with which no WireGuard handshake can complete');
