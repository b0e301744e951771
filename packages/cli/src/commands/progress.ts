import cliProgress from 'cli-progress';

/** Reports the progress of a long command. */
interface Progress {
  /** `done` of `total` units so far. */
  update(done: number, total: number): void;
  /** Stops the bar and ends its line. */
  finish(): void;
}

/**
 * Progress on stderr with cli-progress: a bar redrawn in place (count, rate
 * per second, time left) when stderr is a terminal, else the same line
 * printed at most every `intervalMs` (default 5 s), so the logs of
 * non-interactive runs show the work moving without flooding.
 */
function createProgress(label: string, unit: string, options: { intervalMs?: number }): Progress {
  const started = performance.now();
  const bar = new cliProgress.SingleBar(
    {
      stream: process.stderr,
      format: `${label}: {bar} {value}/{total} ${unit} ({rate}/s, {eta_formatted} left)`,
      noTTYOutput: true,
      notTTYSchedule: options.intervalMs ?? 5_000,
      hideCursor: true,
    },
    cliProgress.Presets.shades_classic,
  );
  let running = false;
  const rate = (done: number) => {
    const perSecond = done / Math.max((performance.now() - started) / 1000, 1e-3);
    return perSecond.toFixed(perSecond < 10 ? 1 : 0);
  };
  return {
    update(done, total) {
      if (!running) {
        bar.start(total, done, { rate: rate(done) });
        running = true;
        return;
      }
      bar.setTotal(total);
      bar.update(done, { rate: rate(done) });
    },
    finish() {
      if (running) bar.stop();
      running = false;
    },
  };
}

/**
 * Runs `work` with a progress bar labelled `label` counting `unit`s (see
 * {@link createProgress}); `work` reports with `update(done, total)`. The bar
 * is stopped however `work` ends, so that a command that fails half-way
 * (a damaged backup, say) leaves no timer redrawing it afterwards.
 * @returns what `work` returns; rethrows what it throws.
 */
export async function withProgress<T>(
  label: string,
  unit: string,
  work: (update: (done: number, total: number) => void) => Promise<T>,
  options: { intervalMs?: number } = {},
): Promise<T> {
  const progress = createProgress(label, unit, options);
  try {
    return await work((done, total) => progress.update(done, total));
  } finally {
    progress.finish();
  }
}
