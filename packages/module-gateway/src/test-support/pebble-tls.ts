import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { toolEnv } from '@agentinfra/testkit';

/** Runs openssl with PATH = `TOOL_PATH`, where `acmeToolsAvailable` found it. */
const run = (command: string, args: readonly string[]) => promisify(execFile)(command, [...args], { env: toolEnv() });

/** TLS material for pebble's own HTTPS listeners: a throw-away CA and a `localhost`/`127.0.0.1` certificate it signed (PEM). */
export interface PebbleTlsMaterial {
  /** The CA that signed pebble's HTTPS certificate (what `AGENTINFRA_ACME_CA_FILE` points at). */
  caPem: string;
  certPem: string;
  keyPem: string;
}

let cached: Promise<PebbleTlsMaterial> | undefined;

/** Generates (once per process, with openssl, in a temp folder removed at once) the TLS material pebble needs; the Debian package ships none. */
export function pebbleTlsMaterial(): Promise<PebbleTlsMaterial> {
  cached ??= generate();
  return cached;
}

async function generate(): Promise<PebbleTlsMaterial> {
  const folder = await mkdtemp(join(tmpdir(), 'agentinfra-pebble-tls-'));
  const path = (name: string) => join(folder, name);
  try {
    const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'];
    await run('openssl', [
      'req',
      '-x509',
      ...ec,
      '-keyout',
      path('ca.key'),
      '-out',
      path('ca.pem'),
      '-days',
      '30',
      '-subj',
      '/CN=agentinfra test pebble TLS CA',
    ]);
    await run('openssl', ['req', ...ec, '-keyout', path('key.pem'), '-out', path('leaf.csr'), '-subj', '/CN=localhost']);
    await writeFile(
      path('leaf.ext'),
      'subjectAltName=DNS:localhost,IP:127.0.0.1\nbasicConstraints=CA:FALSE\nkeyUsage=digitalSignature\nextendedKeyUsage=serverAuth\n',
    );
    await run('openssl', [
      'x509',
      '-req',
      '-in',
      path('leaf.csr'),
      '-CA',
      path('ca.pem'),
      '-CAkey',
      path('ca.key'),
      '-CAcreateserial',
      '-out',
      path('cert.pem'),
      '-days',
      '30',
      '-extfile',
      path('leaf.ext'),
    ]);
    const [caPem, certPem, keyPem] = await Promise.all(['ca.pem', 'cert.pem', 'key.pem'].map((name) => readFile(path(name), 'utf8')));
    return { caPem: caPem as string, certPem: certPem as string, keyPem: keyPem as string };
  } finally {
    await rm(folder, { recursive: true, force: true });
  }
}
