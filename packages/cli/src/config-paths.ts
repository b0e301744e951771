import { existsSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import { type AnyModule, coreEnvBindings, type EnvBinding, readRawConfig, type ServerConfig } from '@agentinfra/core';
import { CliError } from './cli-error.js';
import { configPath } from './commands/init.js';
import { sqliteFileIn } from './data-dir.js';

/**
 * The config file a command reads: the one named with `-c`/`--config` or
 * `AGENTINFRA_CONFIG`, else `./agentinfra.config.json`, which may be missing
 * (every setting then comes from the environment).
 * @param file the value of `-c`/`--config` (commander also takes it from `AGENTINFRA_CONFIG`).
 * @returns the absolute path.
 * @throws CliError (exit 2) naming the path when a file named with `-c` or `AGENTINFRA_CONFIG` does not
 *   exist: an operator's settings file that went missing must not turn silently into the defaults.
 */
export function configFileToRead(file?: string): string {
  const named = file || process.env.AGENTINFRA_CONFIG;
  const path = configPath(named);
  if (named && !existsSync(path)) {
    throw new CliError(
      `config file ${path} (named by --config or AGENTINFRA_CONFIG) does not exist: check the path, ` +
        `or write a starter config there with \`agentinfra -c ${path} init\`.`,
      2,
    );
  }
  return path;
}

/** A setting that names a file or folder: `section` is a module's config key (`null` for core), `path` the place within it. */
interface PathSetting {
  section: string | null;
  path: readonly string[];
}

/** Every setting that names a file or folder. */
const PATH_SETTINGS: readonly PathSetting[] = [
  { section: null, path: ['dataDir'] },
  { section: 'gateway', path: ['caFile'] },
  { section: 'postbox', path: ['smtp', 'tlsCertFile'] },
  { section: 'postbox', path: ['smtp', 'tlsKeyFile'] },
];

function valueAt(tree: unknown, path: readonly string[]): unknown {
  let node = tree;
  for (const key of path) {
    if (typeof node !== 'object' || node === null) return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  return node;
}

function setAt(tree: unknown, path: readonly string[], value: string): void {
  const parent = valueAt(tree, path.slice(0, -1));
  if (typeof parent === 'object' && parent !== null) (parent as Record<string, unknown>)[path.at(-1) as string] = value;
}

/** Whether a (non-empty) environment variable set the value; readConfigSources ignores empty ones too. */
function setByEnv(bindings: readonly EnvBinding[], path: readonly string[], env: NodeJS.ProcessEnv): boolean {
  const key = path.join('.');
  return bindings.some((binding) => binding.path.join('.') === key && (env[binding.name] ?? '') !== '');
}

/**
 * Makes each relative path the config file itself gives (`dataDir`,
 * `gateway.caFile`, `postbox.smtp.tlsCertFile`, `postbox.smtp.tlsKeyFile`)
 * absolute against the file's folder, so that `agentinfra -c
 * /srv/agentinfra/agentinfra.config.json …` uses the same data directory
 * from any working directory. A value from an environment variable, and a
 * default, stay relative to the current directory. Changes `config` in place.
 * @returns `config`.
 */
export function anchorConfigFilePaths(
  config: ServerConfig,
  modules: readonly AnyModule[],
  env: NodeJS.ProcessEnv = process.env,
): ServerConfig {
  if (!config.fileFound) return config;
  const fileValues = readRawConfig({ file: config.file, env: {}, bindings: [] }).raw;
  const base = dirname(config.file);
  for (const { section, path } of PATH_SETTINGS) {
    const module = section === null ? undefined : modules.find((candidate) => candidate.config?.key === section);
    if (section !== null && !module) continue;
    const value = valueAt(fileValues, section === null ? path : [section, ...path]);
    const bindings = module ? (module.config?.env ?? []) : coreEnvBindings;
    if (typeof value !== 'string' || isAbsolute(value) || setByEnv(bindings, path, env)) continue;
    if (section === null && path[0] === 'dataDir') refuseStrandedDatabase(value, resolve(base, value), config.file);
    setAt(module ? config.modules[module.name] : config.core, path, resolve(base, value));
  }
  return config;
}

/**
 * Before relative paths in the config file were taken from its folder, a
 * relative `dataDir` meant the current directory. A deployment that ran
 * `-c /etc/…/agentinfra.config.json` from elsewhere has its database there:
 * rather than start on a new, empty database next to the config file, stop
 * and name both places.
 * @throws CliError (exit 2) when only the directory-relative folder holds a database.
 */
function refuseStrandedDatabase(value: string, anchored: string, file: string): void {
  const old = resolve(value);
  if (old === anchored || existsSync(sqliteFileIn(anchored)) || !existsSync(sqliteFileIn(old))) return;
  throw new CliError(
    `dataDir "${value}" in ${file} now means ${anchored} (relative paths in the config file are taken from its folder), ` +
      `but the database is in ${old}. Move ${old} to ${anchored}, or write the absolute path ${old} as dataDir.`,
    2,
  );
}
