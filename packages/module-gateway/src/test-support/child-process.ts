import { type ChildProcess, spawn } from 'node:child_process';
import { toolEnv } from '@agentinfra/testkit';

/** A server process a test started; its output is kept for failure messages. */
export interface TestProcess {
  readonly child: ChildProcess;
  /** Everything the process wrote to stdout and stderr so far (last 64 KiB). */
  output(): string;
  /** Sends SIGTERM and waits for the exit (SIGKILL after 5 s). */
  stop(): Promise<void>;
}

/**
 * Starts `command` with `args` and `env` added to the environment, PATH set
 * to `TOOL_PATH` (./tool-path.ts, where `acmeToolsAvailable` found it),
 * collecting its output; rejects if it cannot be spawned.
 */
export async function startProcess(command: string, args: readonly string[], env: NodeJS.ProcessEnv = {}): Promise<TestProcess> {
  const child = spawn(command, [...args], { env: toolEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString('utf8')).slice(-65_536);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  await new Promise<void>((resolve, reject) => {
    child.once('spawn', () => resolve());
    child.once('error', reject);
  });
  // A test process that dies without its afterAll must not leave servers behind.
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);
  const exited = new Promise<void>((resolve) =>
    child.once('exit', () => {
      process.removeListener('exit', killOnExit);
      resolve();
    }),
  );
  return {
    child,
    output: () => output,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** Calls `probe` every 50 ms until it resolves true; throws with `describe()` after `timeoutMs`. */
export async function waitUntil(probe: () => Promise<boolean>, options: { timeoutMs: number; describe: () => string }): Promise<void> {
  const deadline = Date.now() + options.timeoutMs;
  while (Date.now() < deadline) {
    if (await probe().catch(() => false)) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`Timed out after ${options.timeoutMs} ms: ${options.describe()}`);
}
