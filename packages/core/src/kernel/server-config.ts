import { type CoreConfig, coreConfigSchema, coreEnvBindings, type EnvBinding, parseConfigSection, readRawConfig } from '../config.js';
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
 * @throws ConfigError naming every invalid config path and its variable.
 */
export function loadServerConfig(options: { modules: readonly AnyModule[]; file?: string; env?: NodeJS.ProcessEnv }): ServerConfig {
  const moduleBindings: EnvBinding[] = options.modules.flatMap((module) =>
    (module.config?.env ?? []).map((binding: EnvBinding) => ({ ...binding, path: [module.config?.key ?? '', ...binding.path] })),
  );
  const bindings = [...coreEnvBindings, ...moduleBindings];
  const { raw, file, fileFound } = readRawConfig({ file: options.file, env: options.env, bindings });
  const source = fileFound ? file : 'the environment (no config file found)';
  const core = parseConfigSection({ schema: coreConfigSchema, value: raw, bindings, source });
  const modules: Record<string, unknown> = {};
  for (const module of options.modules) {
    if (!module.config) continue;
    modules[module.name] = parseConfigSection({
      schema: module.config.schema,
      value: raw[module.config.key] ?? {},
      prefix: [module.config.key],
      bindings,
      source,
    });
  }
  return { core, modules, file, fileFound };
}
