import { statSync } from 'node:fs';
import { readRawConfig, type ServerConfig } from '@agentinfra/core';
import type { Logger } from 'pino';

/**
 * Every setting of the core and module config schemas that holds a
 * credential, as its dotted path (a list's items under the list's path).
 * A URL setting holds one only when it carries a password (see {@link URL_WITH_PASSWORD}).
 */
export const CREDENTIAL_SETTINGS: readonly string[] = [
  'bridgeKey',
  'masterKey',
  'previousMasterKeys',
  's3.secretKey',
  'embedder.apiKey',
  'metrics.token',
  'gateway.eab.hmacKey',
  'gateway.rfc2136.keySecret',
  'postbox.scorer.token',
];

/** A URL with a password: `scheme://user:password@host`, or a `password=` query parameter (PostgreSQL). */
const URL_WITH_PASSWORD = /^[a-z][a-z0-9+.-]*:\/\/(?:[^/@\s:]*:[^/@\s]+@|\S*[?&]password=[^&#\s])/i;

/** Every string in `tree`, with the dotted path of its setting (a list's items under the list's path). */
function stringSettings(tree: unknown, path: readonly string[] = []): Array<{ setting: string; value: string }> {
  if (typeof tree === 'string') return [{ setting: path.join('.'), value: tree }];
  if (Array.isArray(tree)) return tree.flatMap((item) => stringSettings(item, path));
  if (typeof tree !== 'object' || tree === null) return [];
  return Object.entries(tree).flatMap(([name, value]) => stringSettings(value, [...path, name]));
}

/**
 * The settings of a raw config tree that hold a credential: one of
 * {@link CREDENTIAL_SETTINGS} set to a non-empty value, or any URL with a
 * password. Names only, in the order of the tree, each once.
 */
export function credentialSettings(tree: unknown): string[] {
  const found = stringSettings(tree)
    .filter(({ setting, value }) => value !== '' && (CREDENTIAL_SETTINGS.includes(setting) || URL_WITH_PASSWORD.test(value)))
    .map(({ setting }) => setting);
  return [...new Set(found)];
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
  const secrets = credentialSettings(readRawConfig({ file: config.file, env: {}, bindings: [] }).raw);
  if (secrets.length === 0) return;
  logger.warn(
    { file: config.file, mode: `0${mode.toString(8)}`, settings: secrets },
    `the config file is readable by other users and holds credentials (${secrets.join(', ')}): run chmod 600 ${config.file}`,
  );
}
