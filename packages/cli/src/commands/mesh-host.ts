import { coreEnvBindings, readRawConfig } from '@agentinfra/core';
import { endpointSchema } from '@agentinfra/module-mesh';
import { CliError } from '../cli-error.js';
import { configFileToRead } from '../config-paths.js';
import { checkAgentId } from './identity.js';

/** The options of `wg-config` and `mesh heartbeat` that go into their requests. */
export interface MeshHostFlags {
  /** `--key` (commander also takes it from `AGENTINFRA_KEY`). */
  key?: string;
  agent?: string;
  /** `wg-config` only. */
  endpoint?: string;
}

/**
 * The bridge key of the configuration this CLI reads: `AGENTINFRA_BRIDGE_KEY`,
 * else `bridgeKey` in the config file; undefined when neither sets it (an
 * agent host usually has no server config).
 * @throws CliError (exit 2) when a config file named with `-c` or `AGENTINFRA_CONFIG` does not exist;
 *   ConfigError when the config file is not a JSON object.
 */
export function configuredBridgeKey(configFile: string | undefined): string | undefined {
  const bindings = coreEnvBindings.filter((binding) => binding.name === 'AGENTINFRA_BRIDGE_KEY');
  const { bridgeKey } = readRawConfig({ file: configFileToRead(configFile), bindings }).raw;
  return typeof bridgeKey === 'string' ? bridgeKey : undefined;
}

/**
 * Checks what `wg-config` and `mesh heartbeat` would send before any request,
 * so that a wrong flag is a usage error naming it rather than an HTTP 400:
 * `--agent` must be an agent id and `--endpoint` a `<host>:<port>` (the
 * server's own rules), and the bridge key, which acts for no agent of its
 * own, needs `--agent`. The CLI knows the key is the bridge key when it is
 * the one of the configuration it reads (see {@link configuredBridgeKey});
 * elsewhere the server refuses it.
 * @param configFile the value of `-c`/`--config`.
 * @throws CliError (exit 2) naming the flag; (exit 2) when a named config file does not exist.
 */
export function checkMeshHostFlags(flags: MeshHostFlags, configFile: string | undefined): void {
  if (flags.agent !== undefined) checkAgentId(flags.agent);
  if (flags.endpoint !== undefined) {
    const parsed = endpointSchema.safeParse(flags.endpoint);
    if (!parsed.success) throw new CliError(`--endpoint "${flags.endpoint}": ${parsed.error.issues[0]?.message ?? 'not <host>:<port>'}`, 2);
  }
  const key = flags.key ?? process.env.AGENTINFRA_DEVICE_KEY;
  if (flags.agent === undefined && key !== undefined && key === configuredBridgeKey(configFile)) {
    throw new CliError('--key is the bridge key, which acts for no agent of its own: pass --agent <agent_id>.', 2);
  }
}
