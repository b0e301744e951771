import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';

/** `sysconf(_SC_CLK_TCK)` on Linux: the unit of the CPU times in /proc/<pid>/stat. */
const CLOCK_TICKS_PER_SECOND = 100;

/** The bridge key of every benchmark server. */
export const BENCH_BRIDGE_KEY = 'bk_benchmark_bridge_key_0123456789abcdef';

/**
 * Environment of `agentinfra serve` for a benchmark, with data in `dataDir`:
 * the bench bridge key, a fixed master key, an empty config file beside the
 * data folder (`<dataDir>.config.json`, written here, so no other is read), any free port,
 * no rate limit, warnings only, and no HTTP-01 (port 80) or SMTP (2525)
 * listeners, so that several servers run side by side. Spread overrides after it.
 */
export function benchServeEnv(dataDir: string): Record<string, string> {
  const config = `${dataDir}.config.json`;
  writeFileSync(config, '{}');
  return {
    AGENTINFRA_BRIDGE_KEY: BENCH_BRIDGE_KEY,
    AGENTINFRA_MASTER_KEY: Buffer.alloc(32, 7).toString('base64'),
    AGENTINFRA_DATA_DIR: dataDir,
    AGENTINFRA_CONFIG: config,
    AGENTINFRA_PORT: '0',
    AGENTINFRA_RATE_LIMIT_PER_MINUTE: '0',
    AGENTINFRA_LOG_LEVEL: 'warn',
    AGENTINFRA_ACME_HTTP_PORT: '0',
    AGENTINFRA_SMTP_PORT: '0',
  };
}

/** A server child process and the URL it printed. */
export interface ServerProcess {
  child: ChildProcess;
  url: string;
  /** Milliseconds from spawn to the `listening on` line. */
  readyMs: number;
  /** Resident set size in MB, from /proc. */
  rssMb(): number;
  /** CPU time (user + system, all threads) the process has used so far, in ms, from /proc. */
  cpuMs(): number;
  stop(): Promise<void>;
}

/**
 * Spawns `node <args>` and waits for a `listening on http://…` line. With
 * `ipc: true` the child also gets an IPC channel (`child.send`, `message`
 * events), e.g. for event-loop-delay-preload.mjs.
 */
export function startProcess(
  args: readonly string[],
  options: { env?: NodeJS.ProcessEnv; cwd?: string; ipc?: boolean } = {},
): Promise<ServerProcess> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...args], {
      env: { ...process.env, ...options.env },
      cwd: options.cwd,
      stdio: options.ipc ? ['ignore', 'pipe', 'pipe', 'ipc'] : ['ignore', 'pipe', 'pipe'],
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
          cpuMs: () => {
            // Fields 14 and 15 of /proc/<pid>/stat (utime, stime) in clock ticks, after the parenthesised command name.
            const fields = readFileSync(`/proc/${child.pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
            return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS_PER_SECOND;
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
