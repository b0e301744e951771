import { existsSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { newCredential, newMasterKey } from '@agentinfra/core';
import { CliError } from '../cli-error.js';
import { fileErrorReason } from '../fs-error.js';
import { makeFolders } from '../make-folders.js';

/** Where `init` looks and writes: `--config`, `AGENTINFRA_CONFIG`, or `./agentinfra.config.json` (an empty value names no file). */
export function configPath(file?: string): string {
  return resolve(file || process.env.AGENTINFRA_CONFIG || './agentinfra.config.json');
}

/**
 * Writes a starter `agentinfra.config.json` (mode 0600) with a fresh bridge
 * key and master key and the embedded defaults, and prints the bridge key.
 * @throws CliError (exit 2) when the file exists (it never overwrites), or when it or its folder cannot be written.
 */
export function runInit(options: { config?: string; out?: NodeJS.WritableStream }): { file: string; bridgeKey: string } {
  const file = configPath(options.config);
  if (existsSync(file)) throw new CliError(`${file} already exists; init never overwrites a config. Delete it first to start over.`, 2);
  const bridgeKey = newCredential('bk_');
  const config = {
    dataDir: './.agentinfra',
    host: '127.0.0.1',
    port: 8787,
    bridgeKey,
    masterKey: newMasterKey(),
    embedder: { provider: 'wordvec' },
  };
  makeFolders(dirname(file), file);
  try {
    writeFileSync(file, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600, flag: 'wx' });
  } catch (error) {
    throw new CliError(`cannot write ${file}: ${fileErrorReason(error)}.`, 2);
  }
  const out = options.out ?? process.stdout;
  out.write(`Wrote ${file} (mode 0600).\n`);
  out.write(`Bridge key (the service-level credential; keep it secret): ${bridgeKey}\n`);
  return { file, bridgeKey };
}
