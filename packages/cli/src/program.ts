import { createRequire } from 'node:module';
import { Argument, Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { CliError } from './cli-error.js';
import { COMPLETION_SHELLS, type CompletionShell, completionScript } from './commands/completion.js';
import { registerMcpCommand } from './commands/mcp.js';

const { version } = createRequire(import.meta.url)('../package.json') as { version: string };

function integer(name: string, min: number, max: number) {
  return (value: string): number => {
    const parsed = Number(value);
    if (!Number.isInteger(parsed) || parsed < min || parsed > max)
      throw new InvalidArgumentError(`${name} must be an integer from ${min} to ${max}.`);
    return parsed;
  };
}

/**
 * The `agentinfra` command tree (commander). Each command loads its code
 * (the modules, adapters, the MCP SDK) only when it runs, so `--help`,
 * `completion` (sourced by every new shell) and usage errors answer at once.
 */
export function createProgram(): Command {
  const program = new Command('agentinfra')
    .description('Infrastructure for software agents: memory, identity, and more behind one HTTP API.')
    .version(version)
    .addOption(new Option('-c, --config <file>', 'config file').env('AGENTINFRA_CONFIG'))
    .showHelpAfterError()
    .exitOverride();

  const config = () => program.opts<{ config?: string }>().config;

  program
    .command('init')
    .description('write agentinfra.config.json with a fresh bridge key and master key (never overwrites)')
    .action(async () => {
      (await import('./commands/init.js')).runInit({ config: config() });
    });

  program
    .command('migrate')
    .description('apply pending database migrations')
    .option('--reembed', 're-embed every semantic memory with the configured embedder')
    .action(async (options: { reembed?: boolean }) =>
      (await import('./commands/migrate.js')).runMigrate({ config: config(), reembed: options.reembed }),
    );

  const parsePort = integer('--port', 0, 65535);
  program
    .command('serve')
    .description('migrate and start the HTTP server')
    .addOption(new Option('-p, --port <port>', 'HTTP port (0 = any free port)').env('AGENTINFRA_PORT'))
    .addOption(new Option('-H, --host <host>', 'bind address').env('AGENTINFRA_HOST'))
    .option('--init', 'write a starter config first when none exists')
    .action(async (options: { port?: string; host?: string; init?: boolean }, command: Command) => {
      // Only the flags are overrides: the variables are read with the rest of the configuration, whose errors name them.
      const fromFlag = (name: string) => command.getOptionValueSource(name) === 'cli';
      let port: number | undefined;
      if (fromFlag('port')) {
        try {
          port = parsePort(options.port as string);
        } catch (error) {
          command.error(`error: option '-p, --port <port>' argument '${options.port}' is invalid. ${(error as Error).message}`, {
            exitCode: 2,
            code: 'commander.invalidArgument',
          });
        }
      }
      const host = fromFlag('host') ? options.host : undefined;
      await (await import('./commands/serve.js')).runServe({ config: config(), port, host, init: options.init });
    });

  program
    .command('issue-device')
    .description('issue a device key for an agent and print it once')
    .requiredOption('-a, --agent <agent_id>', 'agent id')
    .requiredOption('-l, --label <label>', 'label of the device')
    .option('--ttl-days <days>', 'lifetime in days (default from config, 90)', integer('--ttl-days', 1, 3650))
    .option('--json', 'print JSON')
    .action(async (options: { agent: string; label: string; ttlDays?: number; json?: boolean }) =>
      (await import('./commands/identity.js')).runIssueDevice({ config: config(), ...options }),
    );

  const agents = program.command('agents').description('manage agents');
  agents
    .command('create')
    .description('create an agent')
    .requiredOption('-a, --agent <agent_id>', 'agent id')
    .requiredOption('-n, --name <display_name>', 'display name')
    .option('--json', 'print JSON')
    .action(async (options: { agent: string; name: string; json?: boolean }) =>
      (await import('./commands/identity.js')).runAgentsCreate({ config: config(), ...options }),
    );

  program
    .command('wg-config')
    .description("write this host's WireGuard config from agent-mesh (makes and registers a key pair on first use)")
    .addOption(new Option('--url <base_url>', 'server URL, with or without /functions/v1').env('AGENTINFRA_URL').makeOptionMandatory())
    .addOption(new Option('--key <key>', 'device key, or the bridge key with --agent').env('AGENTINFRA_KEY'))
    .option('--agent <agent_id>', 'agent to act for (required with the bridge key)')
    .requiredOption('--private-key-file <path>', 'WireGuard private key; generated (0600) when missing')
    .option('--out <path>', 'wg-quick file to write', '/etc/wireguard/agent0.conf')
    .option('--endpoint <host:port>', "register this host's key at <host:port> (required on first use)")
    .option('--watch <interval>', 're-fetch every interval (30s, 5m) and rewrite only on change')
    .action(
      async (options: {
        url: string;
        key?: string;
        agent?: string;
        privateKeyFile: string;
        out: string;
        endpoint?: string;
        watch?: string;
      }) => {
        (await import('./commands/mesh-host.js')).checkMeshHostFlags(options, config());
        const result = await (await import('@agentinfra/module-mesh/host')).runWgConfig(options);
        // A run that rewrote the file said so; say it of one that did not too, instead of printing nothing.
        if (options.watch === undefined && !result.changed) {
          process.stdout.write(`${result.file} unchanged (${result.peers} peer${result.peers === 1 ? '' : 's'})\n`);
        }
      },
    );

  const mesh = program.command('mesh').description('agent-mesh commands for agent hosts');
  mesh
    .command('heartbeat')
    .description('mark this host online in agent-mesh once, or every interval until SIGTERM')
    .addOption(new Option('--url <base_url>', 'server URL, with or without /functions/v1').env('AGENTINFRA_URL').makeOptionMandatory())
    .addOption(new Option('--key <key>', 'device key, or the bridge key with --agent').env('AGENTINFRA_KEY'))
    .option('--agent <agent_id>', 'agent to act for (required with the bridge key)')
    .option('--every <interval>', 'beat at this interval (30s, 1m) until stopped')
    .action(async (options: { url: string; key?: string; agent?: string; every?: string }) => {
      (await import('./commands/mesh-host.js')).checkMeshHostFlags(options, config());
      await (await import('@agentinfra/module-mesh/host')).runMeshHeartbeat(options);
    });

  const audit = program.command('audit').description('the tamper-evident audit log');
  audit
    .command('verify')
    .description('walk the hash chain of the audit log; exits 1 when a row was edited, deleted or inserted')
    .option('--json', 'print the report as JSON')
    .action(async (options: { json?: boolean }) => (await import('./commands/audit.js')).runAuditVerify({ config: config(), ...options }));

  program
    .command('backup')
    .description('snapshot the embedded default (SQLite and blob folder) into a .tar.gz while the server runs; not the master key')
    .requiredOption('-o, --out <file>', 'archive to write (must not exist)')
    .action(async (options: { out: string }) => (await import('./commands/backup.js')).runBackup({ config: config(), ...options }));

  program
    .command('restore')
    .description('unpack a backup into the (new or empty) data directory after verifying every checksum')
    .requiredOption('-f, --from <file>', 'archive written by `agentinfra backup`')
    .action(async (options: { from: string }) => (await import('./commands/restore.js')).runRestore({ config: config(), ...options }));

  registerMcpCommand(program, config);

  program
    .command('completion')
    .description('print a shell completion script (bash: source <(agentinfra completion bash); zsh: the same in .zshrc)')
    .addArgument(new Argument('<shell>', 'shell').choices(COMPLETION_SHELLS))
    .action((shell: CompletionShell) => void process.stdout.write(completionScript(program, shell)));
  return program;
}

/**
 * The exit code of an error the CLI reports: its own for CLI and mesh host
 * errors, 2 for configuration errors (those of a module's start-up checks
 * included), 1 for anything else.
 */
async function exitCodeOf(error: unknown): Promise<1 | 2> {
  if (error instanceof CliError) return error.exitCode;
  // When the error was the loading of that code itself (a broken install), it is a failure at run time.
  const loaded = async <T>(load: () => Promise<T>) => load().catch(() => null);
  const mesh = await loaded(() => import('@agentinfra/module-mesh/host'));
  if (mesh && error instanceof mesh.MeshHostError) return error.exitCode;
  const core = await loaded(() => import('@agentinfra/core'));
  return core && error instanceof core.ConfigError ? 2 : 1;
}

/**
 * Runs the CLI and returns the exit code: 0 on success, 2 for usage and
 * configuration errors, 1 for failures at run time.
 */
export async function main(argv: readonly string[]): Promise<number> {
  const program = createProgram();
  try {
    await program.parseAsync([...argv], { from: 'user' });
    return 0;
  } catch (error) {
    if (error instanceof CommanderError) {
      return error.exitCode === 0 || error.code === 'commander.helpDisplayed' || error.code === 'commander.version' ? 0 : 2;
    }
    process.stderr.write(`agentinfra: ${error instanceof Error ? error.message : String(error)}\n`);
    return await exitCodeOf(error);
  }
}
