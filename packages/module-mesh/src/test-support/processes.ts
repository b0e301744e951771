import { execFile } from 'node:child_process';
import { toolEnv } from '@agentinfra/testkit';

/**
 * Runs `command` with `args` (no shell), feeding `input` on stdin, with
 * PATH = `TOOL_PATH` (see ./tool-path.ts), so it finds the tools the suite
 * gates found, also when run through `ip netns exec` or `bash -c`.
 * @returns stdout.
 * @throws Error with the command line, exit code and stderr when it fails or outlives `timeoutMs`.
 */
export function runCommand(
  command: string,
  args: readonly string[],
  options: { input?: string; timeoutMs?: number } = {},
): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      command,
      [...args],
      { timeout: options.timeoutMs ?? 20_000, encoding: 'utf8', env: toolEnv() },
      (error, stdout, stderr) => {
        if (error)
          reject(
            new Error(`${command} ${args.join(' ')} failed (${error.code ?? error.signal ?? error.message}): ${stderr.trim()}`, {
              cause: error,
            }),
          );
        else resolve(stdout);
      },
    );
    // A command that does not read its input may exit first: the broken pipe is not an error of the command.
    child.stdin?.on('error', () => undefined);
    if (options.input === undefined) child.stdin?.end();
    else child.stdin?.end(options.input);
  });
}
