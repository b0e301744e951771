import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

/**
 * Runs `source` as an ES module in a new Node process (`node <execArgv>
 * --input-type=module -e source`), e.g. to load a built file under command
 * line options a test process does not have.
 * @returns the process's standard output, trimmed.
 * @throws Error when the process exits with a non-zero code (its output on `stdout`/`stderr`).
 */
export async function runNodeModule(source: string, execArgv: readonly string[] = []): Promise<string> {
  const { stdout } = await promisify(execFile)(process.execPath, [...execArgv, '--input-type=module', '-e', source]);
  return stdout.trim();
}
