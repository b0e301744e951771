import { acmeClient } from './acme-http.js';

/**
 * The part of acme-client's client this module reaches past its typed
 * surface: `revokeCertificate` always signs with the account's key ID, and
 * its API layer (acme-client 5.x `AcmeApi`) is the only way to send a JWS
 * with the signing key's own JWK instead.
 */
interface AcmeApiInternals {
  api: {
    apiResourceRequest(
      resource: 'revokeCert',
      payload: { certificate: string; reason: number },
      validStatusCodes: number[],
      options: { includeJwsKid: boolean },
    ): Promise<unknown>;
  };
}

/**
 * Asks the CA at `directoryUrl` to revoke `certificatePem` (the leaf) with a
 * request signed by the certificate's own private key and carrying its JWK
 * (RFC 8555 §7.6, the form that needs no account): for a certificate whose
 * ordering account the server no longer holds.
 * @param options.keyPem the certificate's private key (PEM, ECDSA P-256/P-384 or RSA).
 * @param options.reason RFC 5280 CRLReason code.
 * @throws Error from acme-client when the CA refuses (the problem document is
 *   recorded in the surrounding `captureAcmeProblems` context).
 */
export async function revokeWithCertificateKey(options: {
  directoryUrl: string;
  certificatePem: string;
  keyPem: string;
  reason: number;
}): Promise<void> {
  const { Client } = await acmeClient();
  const client = new Client({ directoryUrl: options.directoryUrl, accountKey: options.keyPem }) as unknown as AcmeApiInternals;
  const certificate = Buffer.from(
    options.certificatePem.replace(/-----(BEGIN|END) CERTIFICATE-----/g, '').replace(/\s+/g, ''),
    'base64',
  ).toString('base64url');
  await client.api.apiResourceRequest('revokeCert', { certificate, reason: options.reason }, [200], { includeJwsKid: false });
}
