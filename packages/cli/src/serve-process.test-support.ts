import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { newCredential, newMasterKey } from '@agentinfra/core';

/** A fresh bridge key and master key as the variables that set them, so a CLI command runs without a config file. */
export function freshKeys(): { AGENTINFRA_BRIDGE_KEY: string; AGENTINFRA_MASTER_KEY: string } {
  return { AGENTINFRA_BRIDGE_KEY: newCredential('bk_'), AGENTINFRA_MASTER_KEY: newMasterKey() };
}

/** The built CLI entry point (`pnpm test` builds before running vitest). */
export const binPath = fileURLToPath(new URL('../dist/bin.js', import.meta.url));

/** A `agentinfra serve` child process and the URL it printed. */
export interface ServeProcess {
  child: ChildProcess;
  url: string;
  /** Everything written to stdout and stderr so far. */
  output(): string;
  /** Sends SIGTERM and resolves with the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/**
 * Runs the CLI to completion.
 * @param options.timeoutMs kill it (SIGKILL) after this long, for a command expected to exit that
 *   might keep running (`serve`); it then resolves with code null.
 */
export function runCli(
  args: readonly string[],
  options: { cwd: string; env?: NodeJS.ProcessEnv; timeoutMs?: number },
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [binPath, ...args], { cwd: options.cwd, env: { ...process.env, ...options.env } });
    const timer = options.timeoutMs === undefined ? undefined : setTimeout(() => child.kill('SIGKILL'), options.timeoutMs);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

let inProcess = false;

/**
 * Runs the CLI's own `main` (what `bin.js` runs) in this test process: the same command tree, checks, messages and
 * exit codes as {@link runCli}, without the ~2 s of CPU a new Node process spends loading the workspace. For commands
 * that finish (never `serve`), one at a time: while it runs, `options.env` is merged into `process.env`, the current
 * directory is `options.cwd`, and what the CLI writes to process.stdout and process.stderr is captured; all three are
 * restored afterwards. Log lines pino writes to file descriptors directly are not captured.
 * @returns the exit code `bin.js` would exit with, and the captured output.
 * @throws Error when another in-process run has not finished.
 */
export async function runCliInProcess(
  args: readonly string[],
  options: { cwd: string; env?: Record<string, string> },
): Promise<{ code: number; stdout: string; stderr: string }> {
  if (inProcess) throw new Error('runCliInProcess: one run at a time (it sets process.env and the current directory)');
  inProcess = true;
  const { main } = await import('./program.js');
  const savedEnv = { ...process.env };
  const savedCwd = process.cwd();
  const output = { stdout: '', stderr: '' };
  const writes = { stdout: process.stdout.write, stderr: process.stderr.write };
  for (const name of ['stdout', 'stderr'] as const) {
    process[name].write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
      output[name] += typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
      const callback = rest.find((arg) => typeof arg === 'function') as (() => void) | undefined;
      if (callback) queueMicrotask(callback);
      return true;
    }) as typeof process.stdout.write;
  }
  try {
    Object.assign(process.env, options.env);
    process.chdir(options.cwd);
    const code = await main(args);
    return { code, ...output };
  } finally {
    process.chdir(savedCwd);
    for (const name of Object.keys(process.env)) if (!(name in savedEnv)) delete process.env[name];
    Object.assign(process.env, savedEnv);
    process.stdout.write = writes.stdout;
    process.stderr.write = writes.stderr;
    inProcess = false;
  }
}

/** Starts `agentinfra serve` and waits for its `listening on http://…` line. */
export function startServe(
  args: readonly string[],
  options: { cwd: string; env?: NodeJS.ProcessEnv; timeoutMs?: number },
): Promise<ServeProcess> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [binPath, 'serve', ...args], {
      cwd: options.cwd,
      env: { ...process.env, AGENTINFRA_LOG_LEVEL: 'warn', ...options.env },
    });
    let output = '';
    const exited = new Promise<number | null>((done) => child.on('exit', (code) => done(code)));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`serve did not print its URL in time:\n${output}`));
    }, options.timeoutMs ?? 20_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const match = /listening on (http:\/\/\S+)/.exec(output);
      if (match?.[1]) {
        clearTimeout(timer);
        resolve({
          child,
          url: match[1],
          output: () => output,
          stop: async (signal = 'SIGTERM') => {
            child.kill(signal);
            return exited;
          },
        });
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`serve exited with ${code}:\n${output}`));
    });
  });
}

/** POSTs JSON to `<url>/functions/v1/<path>` with a bearer credential. */
// biome-ignore lint/suspicious/noExplicitAny: tests read whichever fields the route under test returns
export async function post(url: string, path: string, body: unknown, credential?: string): Promise<{ status: number; body: any }> {
  const response = await fetch(`${url}/functions/v1/${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(credential ? { authorization: `Bearer ${credential}` } : {}) },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: await response.json() };
}
