import { type Command, Option } from 'commander';
import { CliError } from '../cli-error.js';
import { checkServerUrl } from './server-url.js';

/**
 * `agentinfra mcp --url URL --key KEY`: the agentinfra MCP tools over stdio,
 * for MCP clients that launch a local process. Every request is forwarded to
 * the server's `/mcp` endpoint with the key (a device key or delegation
 * token; also from `AGENTINFRA_KEY`). Only MCP messages go to stdout;
 * diagnostics go to stderr. The bridge key of the configuration the CLI reads
 * is refused before any request (exit 2): it is no MCP credential.
 * @param configFile the value of `-c`/`--config`, read when the command runs.
 */
export function registerMcpCommand(program: Command, configFile: () => string | undefined): void {
  program
    .command('mcp')
    .description('serve the MCP tools of an agentinfra server over stdio (for MCP clients that launch a process)')
    .addOption(
      new Option('--url <base_url>', 'agentinfra server URL (its /mcp endpoint is used)').env('AGENTINFRA_URL').makeOptionMandatory(),
    )
    .addOption(new Option('--key <key>', 'device key or delegation token').env('AGENTINFRA_KEY'))
    .action(async (options: { url: string; key?: string }, command: Command) => {
      checkServerUrl(options.url, command.getOptionValueSource('url') === 'env' ? 'AGENTINFRA_URL' : '--url');
      if (!options.key) throw new CliError('A key is required: --key or AGENTINFRA_KEY (a device key or delegation token).', 2);
      const { configuredBridgeKey } = await import('./mesh-host.js');
      if (options.key === configuredBridgeKey(configFile())) {
        throw new CliError(
          '--key is the bridge key, which is not an MCP credential: use a device key or delegation token of the agent.',
          2,
        );
      }
      try {
        const { runStdioProxy } = await import('@agentinfra/mcp');
        await runStdioProxy({ url: options.url, key: options.key });
      } catch (error) {
        throw new CliError((error as Error).message, 1);
      }
    });
}
