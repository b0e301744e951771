import type { CertificateKeyType } from '../config.js';
import { loadAcmeClient } from './acme-client-loader.js';

/** A new private key of `type` as PKCS#8 PEM (ECDSA P-256/P-384 or RSA). */
export async function createCertificateKey(type: CertificateKeyType): Promise<string> {
  const acme = await loadAcmeClient();
  switch (type) {
    case 'ecdsa-p256':
      return (await acme.crypto.createPrivateEcdsaKey('P-256')).toString('utf8');
    case 'ecdsa-p384':
      return (await acme.crypto.createPrivateEcdsaKey('P-384')).toString('utf8');
    case 'rsa-2048':
      return (await acme.crypto.createPrivateRsaKey(2048)).toString('utf8');
    case 'rsa-3072':
      return (await acme.crypto.createPrivateRsaKey(3072)).toString('utf8');
    case 'rsa-4096':
      return (await acme.crypto.createPrivateRsaKey(4096)).toString('utf8');
  }
}

/** A PKCS#10 CSR (PEM) for `host` (CN and the only SAN), signed with `keyPem`. */
export async function createCertificateRequest(options: { host: string; keyPem: string }): Promise<string> {
  const acme = await loadAcmeClient();
  const [, csr] = await acme.crypto.createCsr({ commonName: options.host, altNames: [options.host] }, options.keyPem);
  return csr.toString('utf8');
}
