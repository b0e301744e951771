import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

/** A certificate made by {@link createSelfSignedCertificate}: its files, its PEM (the CA a client trusts) and their removal. */
export interface SelfSignedCertificate {
  certFile: string;
  keyFile: string;
  /** The certificate's PEM, to pass as a client's `ca`. */
  ca: Buffer;
  /** Removes both files. */
  remove(): Promise<void>;
}

/**
 * A self-signed RSA certificate for `localhost` and 127.0.0.1, valid one day,
 * made with the `openssl` command in a fresh temporary folder (for the SMTP
 * listener's STARTTLS in tests).
 * @throws the `openssl` command's error when it is missing or fails.
 */
export async function createSelfSignedCertificate(): Promise<SelfSignedCertificate> {
  const folder = await mkdtemp(join(tmpdir(), 'agentinfra-smtp-tls-'));
  const certFile = join(folder, 'cert.pem');
  const keyFile = join(folder, 'key.pem');
  await promisify(execFile)('openssl', [
    ...['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=localhost'],
    ...['-addext', 'subjectAltName=DNS:localhost,IP:127.0.0.1', '-keyout', keyFile, '-out', certFile],
  ]);
  return { certFile, keyFile, ca: await readFile(certFile), remove: () => rm(folder, { recursive: true, force: true }) };
}
