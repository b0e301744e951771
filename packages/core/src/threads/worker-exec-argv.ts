/**
 * The `execArgv` option for a worker thread (`new Worker`, piscina) that runs
 * one of this project's scripts. From TypeScript sources (`fromSources`:
 * tests, tsx) the parent's options plus `--import tsx`, so that the thread
 * can load a `.ts` file. From a build, `undefined`: Node then hands the
 * thread the parent's options itself and leaves out the V8 and process-wide
 * ones, whereas passing `process.execArgv` explicitly throws
 * ERR_WORKER_INVALID_EXEC_ARGV as soon as the process runs with an option
 * such as `--max-old-space-size` (`node --max-old-space-size=4096 … serve`).
 */
export function workerExecArgv(fromSources: boolean): string[] | undefined {
  return fromSources ? [...process.execArgv, '--import', 'tsx'] : undefined;
}
