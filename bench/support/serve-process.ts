import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';

/** A server child process and the URL it printed. */
export interface ServerProcess {
  child: ChildProcess;
  url: string;
  /** Milliseconds from spawn to the `listening on` line. */
  readyMs: number;
  /** Resident set size in MB, from /proc. */
  rssMb(): number;
  stop(): Promise<void>;
}

/** Spawns `node <args>` and waits for a `listening on http://…` line. */
export function startProcess(args: readonly string[], options: { env?: NodeJS.ProcessEnv; cwd?: string } = {}): Promise<ServerProcess> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...args], {
      env: { ...process.env, ...options.env },
      cwd: options.cwd,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const match = /listening on (http:\/\/[^\s)]+)/.exec(output);
      if (match?.[1]) {
        child.stdout?.off('data', onData);
        resolve({
          child,
          url: match[1],
          readyMs: performance.now() - started,
          rssMb: () => {
            const status = readFileSync(`/proc/${child.pid}/status`, 'utf8');
            return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
          },
          stop: () =>
            new Promise((done) => {
              child.once('exit', () => done());
              child.kill('SIGTERM');
            }),
        });
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', (chunk) => (output += chunk.toString()));
    child.once('exit', (code) => reject(new Error(`process exited with ${code} before listening:\n${output}`)));
  });
}

/** Prints a markdown table. */
export function printTable(headers: readonly string[], rows: ReadonlyArray<ReadonlyArray<string | number>>): void {
  const line = (cells: ReadonlyArray<string | number>) => `| ${cells.join(' | ')} |`;
  process.stdout.write(`${[line(headers), line(headers.map(() => '---')), ...rows.map(line)].join('\n')}\n`);
}
