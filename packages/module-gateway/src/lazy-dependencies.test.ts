import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

/** Packages only a running server's ACME and DNS-01 code needs (acme-client alone costs ~0.35 s of CPU to load). */
const LAZY = ['acme-client', 'dns-packet'];

/**
 * Run in a fresh Node process (the test workers share their modules): imports
 * the package's entry from source (tsx), uses what the CLI uses (module
 * definition, migrations, config schema), and prints which of {@link LAZY}
 * the process had loaded (CommonJS, so they land in `require.cache`); then
 * loads them the way the ACME and DNS-01 code does, and prints again, which
 * shows that the check sees them.
 */
const script = `
import { createRequire } from 'node:module';
const cache = createRequire(import.meta.url).cache;
const loaded = () => ${JSON.stringify(LAZY)}.filter((name) => Object.keys(cache).some((file) => file.includes('/node_modules/' + name + '/')));
const gateway = await import('./src/index.ts');
gateway.gatewayConfigSchema.parse({});
const atImport = loaded();
const migrations = Object.keys(gateway.gatewayModule.migrations).length;
await (await import('./src/acme/acme-http.ts')).acmeClient();
(await import('./src/dns01/dns-packet-codecs.ts')).dnsCodecs();
console.log(JSON.stringify({ atImport, migrations, afterUse: loaded() }));
`;

describe('@agentinfra/module-gateway entry', () => {
  // Every agentinfra CLI command (migrate, backup, audit verify …) imports every module package for its migrations and config.
  it('loads acme-client and dns-packet only when a server first needs them, not on import', async () => {
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--import', 'tsx', '--conditions=@agentinfra/source', '--input-type=module', '-e', script],
      { cwd: fileURLToPath(new URL('..', import.meta.url)) },
    );
    const result = JSON.parse(stdout.trim().split('\n').at(-1) ?? '{}');
    expect(result.atImport).toEqual([]);
    expect(result.migrations).toBeGreaterThan(0);
    expect(result.afterUse).toEqual(LAZY);
  }, 30_000);
});
