import { closeSync, openSync, statSync, unlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isMainThread } from 'node:worker_threads';

/** A marker older than this (milliseconds) is left over from an earlier run whose process id was reused. */
const MARKER_LIFETIME_MS = 10 * 60_000;

/**
 * Prints `line` on stderr once per vitest run, however many test files and
 * workers ask for it. The first caller creates the marker file
 * `<tmpdir>/agentinfra-testkit-<run pid>-<key>` and prints; later callers find
 * it and stay quiet. The run pid is the vitest process: the parent of a
 * `forks` worker, the process itself for `threads`. Outside vitest the line is
 * always printed. Markers are a few empty files in the temp folder.
 */
export function printOncePerRun(key: string, line: string): void {
  if (process.env.VITEST !== undefined && !claimMarker(key)) return;
  console.warn(line);
}

/** Whether this caller is the first of the run to ask for `key`. */
function claimMarker(key: string): boolean {
  const runPid = isMainThread ? process.ppid : process.pid;
  const marker = join(tmpdir(), `agentinfra-testkit-${runPid}-${key}`);
  try {
    if (Date.now() - statSync(marker).mtimeMs > MARKER_LIFETIME_MS) unlinkSync(marker);
  } catch {
    // No marker yet (or another worker just replaced it): the exclusive create below decides.
  }
  try {
    closeSync(openSync(marker, 'wx'));
    return true;
  } catch (error) {
    return (error as { code?: unknown }).code !== 'EEXIST';
  }
}
