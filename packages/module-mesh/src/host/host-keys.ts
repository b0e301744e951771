import { createPrivateKey, createPublicKey, generateKeyPairSync } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createFileOnce } from './atomic-file.js';
import { MeshHostError } from './host-error.js';

/** Canonical base64 of 32 bytes, as `wg genkey` / `wg pubkey` print keys. */
const BASE64_KEY = /^[A-Za-z0-9+/]{42}[AEIMQUYcgkosw048]=$/;
/** DER prefix of a PKCS #8 X25519 private key (RFC 8410); the 32 raw bytes follow. */
const PKCS8_X25519_PREFIX = Buffer.from('302e020100300506032b656e04220420', 'hex');

/** The host's WireGuard key pair, base64 like `wg genkey` / `wg pubkey`. */
export interface HostKeyPair {
  privateKey: string;
  publicKey: string;
}

/** The X25519 public key of a base64 private key (the same value `wg pubkey` prints). @throws MeshHostError when it is not base64 of 32 bytes. */
export function publicKeyOf(privateKey: string, source: string): string {
  if (!BASE64_KEY.test(privateKey)) throw new MeshHostError(`${source} does not hold a WireGuard private key (base64 of 32 bytes).`, 2);
  const der = Buffer.concat([PKCS8_X25519_PREFIX, Buffer.from(privateKey, 'base64')]);
  const jwk = createPublicKey(createPrivateKey({ key: der, format: 'der', type: 'pkcs8' })).export({ format: 'jwk' });
  return Buffer.from(jwk.x as string, 'base64url').toString('base64');
}

/** A new X25519 key pair (RFC 7748) from node:crypto. */
export function generateHostKeyPair(): HostKeyPair {
  const jwk = generateKeyPairSync('x25519').privateKey.export({ format: 'jwk' });
  return {
    privateKey: Buffer.from(jwk.d as string, 'base64url').toString('base64'),
    publicKey: Buffer.from(jwk.x as string, 'base64url').toString('base64'),
  };
}

/**
 * Reads the private key at `file`, or when it does not exist and `create`
 * is set, generates one and stores it there (mode 0600, never replacing a
 * file that appeared meanwhile).
 * @throws MeshHostError when the file holds no key, or is missing and `create` is off.
 */
export async function loadOrCreateHostKey(file: string, create: boolean): Promise<HostKeyPair & { created: boolean }> {
  const existing = await readFile(file, 'utf8').catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return undefined;
    throw new MeshHostError(`Cannot read ${file}: ${error.message}`, 1);
  });
  if (existing !== undefined) {
    const privateKey = existing.trim();
    return { privateKey, publicKey: publicKeyOf(privateKey, file), created: false };
  }
  if (!create) {
    throw new MeshHostError(
      `${file} does not exist: pass --endpoint <host:port> so that a new key pair is generated and its public key registered.`,
      2,
    );
  }
  const pair = generateHostKeyPair();
  if (!(await createFileOnce(file, `${pair.privateKey}\n`))) return await loadOrCreateHostKey(file, false);
  return { ...pair, created: true };
}
