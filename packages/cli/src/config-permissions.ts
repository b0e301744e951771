import { statSync } from 'node:fs';
import { readRawConfig, type ServerConfig } from '@agentinfra/core';
import type { Logger } from 'pino';

/** Setting names that hold a credential (matched anywhere in the file's tree). */
const SECRET_NAME = /^(bridgeKey|masterKey)$|secret|password|token|apiKey/i;
/** A URL with a password, `scheme://user:password@host`. */
const URL_WITH_PASSWORD = /^[a-z][a-z0-9+.-]*:\/\/[^/@\s:]*:[^/@\s]+@/i;

/** The names of the settings in `tree` that hold a credential (a secret-named string, or a URL with a password). */
function secretSettings(tree: unknown, path: string[] = []): string[] {
  if (typeof tree !== 'object' || tree === null) return [];
  const found: string[] = [];
  for (const [name, value] of Object.entries(tree)) {
    const here = [...path, name];
    if (typeof value === 'string' && value !== '' && (SECRET_NAME.test(name) || URL_WITH_PASSWORD.test(value))) {
      found.push(here.join('.'));
    } else {
      found.push(...secretSettings(value, here));
    }
  }
  return found;
}

/**
 * Logs one warning when the config file holds a credential (the bridge key,
 * the master key, a password in a database URL, …) and other users of the
 * machine can read it (group or world read bit, POSIX modes only), as
 * OpenSSH does for a private key. `agentinfra init` writes the file with
 * mode 0600. The warning names the settings, never their values.
 */
export function warnWhenConfigReadableByOthers(config: ServerConfig, logger: Logger): void {
  if (!config.fileFound || process.platform === 'win32') return;
  const mode = statSync(config.file).mode & 0o777;
  if ((mode & 0o044) === 0) return;
  const secrets = secretSettings(readRawConfig({ file: config.file, env: {}, bindings: [] }).raw);
  if (secrets.length === 0) return;
  logger.warn(
    { file: config.file, mode: `0${mode.toString(8)}`, settings: secrets },
    `the config file is readable by other users and holds credentials (${secrets.join(', ')}): run chmod 600 ${config.file}`,
  );
}
