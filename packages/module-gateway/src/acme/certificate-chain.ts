import { createPrivateKey, X509Certificate } from 'node:crypto';

/** What the gateway stores about an issued certificate. */
export interface CertificateFacts {
  /** Start of validity, ms since the epoch. */
  notBefore: number;
  /** End of validity, ms since the epoch. */
  notAfter: number;
  /** Serial number, lowercase hex without leading zeros. */
  serial: string;
}

/**
 * Reads the leaf (first certificate) of a PEM chain as an ACME server
 * returns it (RFC 8555 §7.4.2) and checks that it names `host` and is
 * signed for `keyPem`'s public key.
 * @throws Error when the chain is empty or unparsable, or the leaf does not match.
 */
export function inspectCertificateChain(options: { chainPem: string; host: string; keyPem: string }): CertificateFacts {
  const first = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/.exec(options.chainPem);
  if (!first) throw new Error('The CA returned no certificate.');
  const leaf = new X509Certificate(first[0]);
  if (leaf.checkHost(options.host, { wildcards: false }) === undefined) {
    throw new Error(`The certificate from the CA does not name ${options.host}.`);
  }
  if (!leaf.checkPrivateKey(createPrivateKey(options.keyPem))) {
    throw new Error('The certificate from the CA is not for the private key of the order.');
  }
  return {
    notBefore: Date.parse(leaf.validFrom),
    notAfter: Date.parse(leaf.validTo),
    serial: leaf.serialNumber.toLowerCase().replace(/^0+(?=.)/, ''),
  };
}
