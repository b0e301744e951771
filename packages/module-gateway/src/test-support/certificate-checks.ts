import { createPrivateKey, X509Certificate } from 'node:crypto';
import { expect } from 'vitest';

/** The certificates of a PEM chain, leaf first. */
export function chainOf(pem: string): X509Certificate[] {
  return (pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? []).map((block) => new X509Certificate(block));
}

/**
 * Asserts that `chainPem` is a leaf for `host` followed by intermediates,
 * each signed by the next, the last signed by `rootPem` (a self-signed root),
 * and that `keyPem` is the leaf's private key.
 */
export function expectChainToRoot(options: { chainPem: string; rootPem: string; host: string; keyPem?: string }): X509Certificate {
  const chain = chainOf(options.chainPem);
  const root = new X509Certificate(options.rootPem);
  expect(chain.length).toBeGreaterThanOrEqual(2);
  const leaf = chain[0] as X509Certificate;
  expect(leaf.checkHost(options.host)).toBe(options.host);
  expect(leaf.subjectAltName).toBe(`DNS:${options.host}`);
  for (let i = 0; i < chain.length; i += 1) {
    const certificate = chain[i] as X509Certificate;
    const issuer = chain[i + 1] ?? root;
    expect(certificate.checkIssued(issuer)).toBe(true);
    expect(certificate.verify(issuer.publicKey)).toBe(true);
  }
  expect(root.verify(root.publicKey)).toBe(true);
  if (options.keyPem) expect(leaf.checkPrivateKey(createPrivateKey(options.keyPem))).toBe(true);
  return leaf;
}

/** The serial of `certificate` as pebble's management API names it (lowercase hex, no leading zeros). */
export function serialOf(certificate: X509Certificate): string {
  return certificate.serialNumber.toLowerCase().replace(/^0+(?=.)/, '');
}
