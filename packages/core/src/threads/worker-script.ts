import { fileURLToPath } from 'node:url';

/** What a worker thread (`new Worker`, piscina) is started with: its script's path and `execArgv`. */
export interface WorkerScript {
  filename: string;
  execArgv: string[] | undefined;
}

/**
 * The worker script `name` (without extension) in the folder of the module
 * at `moduleUrl` (that module's `import.meta.url`), and the `execArgv` to
 * start it with. From TypeScript sources (`moduleUrl` ends in `.ts`: tests,
 * tsx) `name.ts`, with the parent's options plus `--import tsx` so that the
 * thread can load it. From a build `name.js` and `undefined`: Node then hands
 * the thread the parent's options itself and leaves out the V8 and
 * process-wide ones, whereas passing `process.execArgv` explicitly throws
 * ERR_WORKER_INVALID_EXEC_ARGV as soon as the process runs with an option
 * such as `--max-old-space-size` (`node --max-old-space-size=4096 … serve`).
 */
export function workerScript(moduleUrl: string, name: string): WorkerScript {
  const fromSources = moduleUrl.endsWith('.ts');
  return {
    filename: fileURLToPath(new URL(`./${name}.${fromSources ? 'ts' : 'js'}`, moduleUrl)),
    execArgv: fromSources ? [...process.execArgv, '--import', 'tsx'] : undefined,
  };
}
