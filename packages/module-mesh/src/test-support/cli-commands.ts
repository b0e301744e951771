/**
 * The host-side commands of the CLI package (`agentinfra wg-config`,
 * `agentinfra mesh heartbeat`), exercised here against a real mesh server.
 * Imported by path: the CLI depends on the modules, not the other way round.
 */

export { CliError } from '../../../cli/src/cli-error.js';
export * from '../../../cli/src/commands/mesh-heartbeat.js';
export * from '../../../cli/src/commands/wg-config.js';
