import {
  type ConfigProblem,
  type CoreConfig,
  checkConfigSection,
  configErrorFor,
  coreConfigSchema,
  coreEnvBindings,
  type EnvBinding,
  readConfigSources,
} from '../config.js';
import { unknownConfigKeys } from '../config-unknown-keys.js';
import type { AnyModule } from './module.js';

/** The validated configuration of a server: core settings plus each module's section. */
export interface ServerConfig {
  core: CoreConfig;
  /** Each module's validated section, by module name. */
  modules: Record<string, unknown>;
  /** The config file that was read (it may not exist). */
  file: string;
  fileFound: boolean;
}

/**
 * Loads and validates the whole configuration once, before any module
 * starts: `agentinfra.config.json` (or `options.file`, or `AGENTINFRA_CONFIG`),
 * then the `AGENTINFRA_*` environment variables of core and of every module
 * (the environment wins).
 * @throws ConfigError listing every invalid setting of core and of every
 *   module at once, each with its source: the variable that set it, the
 *   config file key, or "not set" (`problems`, `configFile` say the same);
 *   a key of the config file that no schema declares (a typo) is one of them.
 */
export function loadServerConfig(options: { modules: readonly AnyModule[]; file?: string; env?: NodeJS.ProcessEnv }): ServerConfig {
  const moduleBindings: EnvBinding[] = options.modules.flatMap((module) =>
    (module.config?.env ?? []).map((binding: EnvBinding) => ({ ...binding, path: [module.config?.key ?? '', ...binding.path] })),
  );
  const bindings = [...coreEnvBindings, ...moduleBindings];
  const { raw, sources, problems } = readConfigSources({ file: options.file, env: options.env, bindings });
  // A variable that could not be converted was left out; zod would only add a second line for the same path.
  const unconverted = new Set(problems.map((problem) => problem.path));
  const collect = <T>(checked: { ok: true; data: T } | { ok: false; problems: ConfigProblem[] }): T | undefined => {
    if (checked.ok) return checked.data;
    problems.push(...checked.problems.filter((problem) => !unconverted.has(problem.path)));
    return undefined;
  };
  const sections = options.modules.flatMap((module) => (module.config ? [module.config] : []));
  const unknown = [
    ...unknownConfigKeys(coreConfigSchema, sources.fileValues, { merged: raw, extra: sections.map((section) => section.key) }),
    ...sections.flatMap((section) =>
      unknownConfigKeys(section.schema, sources.fileValues[section.key], { merged: raw[section.key], prefix: [section.key] }),
    ),
  ];
  for (const path of unknown) {
    problems.push({
      path,
      message: 'unknown key: not a setting of the server or of its modules (check the spelling against the README, Configuration)',
      source: { kind: 'file', file: sources.file },
    });
  }
  const core = collect(checkConfigSection({ schema: coreConfigSchema, value: raw, sources }));
  const modules: Record<string, unknown> = {};
  for (const module of options.modules) {
    if (!module.config) continue;
    modules[module.name] = collect(
      checkConfigSection({ schema: module.config.schema, value: raw[module.config.key] ?? {}, prefix: [module.config.key], sources }),
    );
  }
  if (problems.length > 0 || core === undefined) throw configErrorFor(problems, sources);
  return { core, modules, file: sources.file, fileFound: sources.fileFound };
}
