import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, join } from 'node:path';

/**
 * Where Debian installs system tools (`nft`, `ip`, `knotd` are in /usr/sbin)
 * even when this process's PATH leaves them out, as a non-root user's PATH
 * (`/usr/local/bin:/usr/bin:/bin`) does.
 */
const SYSTEM_DIRS = ['/usr/local/sbin', '/usr/local/bin', '/usr/sbin', '/usr/bin', '/sbin', '/bin'];

/**
 * The PATH the tests both look their tools up in and run them with: this
 * process's PATH (when the module loads), then the system directories it lacks.
 */
export const TOOL_PATH = [...new Set([...(process.env.PATH ?? '').split(delimiter).filter(Boolean), ...SYSTEM_DIRS])].join(delimiter);

/**
 * The environment for every process a test runs that may start a tool by
 * name: `process.env` and `extra`, with PATH set to {@link TOOL_PATH}, so
 * spawning a tool (and what it runs: `ip netns exec`, `bash -c` hooks,
 * `wg-quick`) finds what {@link findTool} found.
 */
export function toolEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return { ...process.env, ...extra, PATH: TOOL_PATH };
}

/**
 * The file `command` resolves to in {@link TOOL_PATH}, the first executable
 * regular file, as a spawn with {@link toolEnv} finds it.
 * @returns its absolute path, or undefined when it is not installed.
 */
export function findTool(command: string): string | undefined {
  for (const dir of TOOL_PATH.split(delimiter)) {
    const file = join(dir, command);
    try {
      accessSync(file, constants.X_OK);
      if (statSync(file).isFile()) return file;
    } catch {
      // Not in this directory.
    }
  }
  return undefined;
}
