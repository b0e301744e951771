import {
  type AnyModule,
  bindHostSchema,
  ConfigError,
  createKernel,
  createLogger,
  type Kernel,
  type KernelSurface,
  loadServerConfig,
  type ServerConfig,
} from '@agentinfra/core';
import { defaultModules } from '@agentinfra/modules';
import { openAdapters } from './adapters.js';
import { CliError } from './cli-error.js';
import { anchorConfigFilePaths, configFileToRead } from './config-paths.js';

/** A kernel built from the configuration, not yet started. */
export interface ConfiguredKernel {
  kernel: Kernel;
  config: ServerConfig;
  /** One line naming the adapters in use. */
  summary: string;
  /** Tells URL-signing adapters the URL the server listens on. */
  setListenUrl(url: string): void;
}

/**
 * Loads the config, the one place every command reads it: relative paths
 * in the config file are taken from the file's folder (see
 * {@link anchorConfigFilePaths}). Throws a {@link CliError} with exit code 2
 * naming every bad setting with its source; it suggests `agentinfra init`
 * only when there is no config file (init never overwrites one). A file
 * named with `-c` or `AGENTINFRA_CONFIG` must exist (see {@link configFileToRead}).
 * @param options.file the config file named with `-c`/`--config`; none: `AGENTINFRA_CONFIG` or `./agentinfra.config.json`.
 */
export function loadConfigOrExit(options: { file?: string; modules?: readonly AnyModule[] }): ServerConfig {
  const modules = options.modules ?? defaultModules;
  const file = configFileToRead(options.file);
  try {
    return anchorConfigFilePaths(loadServerConfig({ modules, file }), modules);
  } catch (error) {
    if (error instanceof ConfigError) {
      const advice =
        error.configFile?.found === false
          ? `\nNo config file at ${error.configFile.path}: run \`agentinfra init\` to write a starter config, or set the variables named above.`
          : '';
      throw new CliError(`${error.message}${advice}`, 2);
    }
    throw error;
  }
}

/**
 * The surfaces `serve` mounts beside the API, imported on demand: the MCP SDK alone is about a third of a
 * command's start-up, which `migrate`, `issue-device` and the other commands that never listen do not need.
 */
async function httpSurfaces(): Promise<KernelSurface[]> {
  const [{ mcpSurface }, { consoleSurface }, { docsSurface }] = await Promise.all([
    import('@agentinfra/mcp'),
    import('@agentinfra/console'),
    import('@agentinfra/docs-page'),
  ]);
  return [mcpSurface(), consoleSurface(), docsSurface()];
}

/**
 * Builds a kernel from the configuration file and environment with the
 * adapters they select and the default modules.
 * @throws CliError (exit 2) on invalid config or `--host`; the adapter's error when a server cannot be reached.
 */
export async function buildKernel(options: {
  file?: string;
  overrides?: { port?: number; host?: string };
  modules?: readonly AnyModule[];
  /** Mount `/mcp`, `/console` and `/docs` (`serve`); commands that never listen skip loading them. */
  surfaces?: boolean;
}): Promise<ConfiguredKernel> {
  const modules = options.modules ?? defaultModules;
  const config = loadConfigOrExit({ file: options.file, modules });
  if (options.overrides?.port !== undefined) config.core.port = options.overrides.port;
  if (options.overrides?.host !== undefined) {
    const host = bindHostSchema.safeParse(options.overrides.host);
    if (!host.success) throw new CliError(`--host "${options.overrides.host}": ${host.error.issues[0]?.message}.`, 2);
    config.core.host = host.data;
  }
  const logger = createLogger({ level: config.core.log.level, format: config.core.log.format });
  const { adapters, summary, setListenUrl } = await openAdapters(config.core, logger);
  const kernel = createKernel({
    config: config.core,
    modules,
    moduleConfigs: config.modules,
    adapters,
    logger,
    surfaces: options.surfaces ? await httpSurfaces() : [],
  });
  return { kernel, config, summary, setListenUrl };
}
