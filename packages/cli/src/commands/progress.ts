import cliProgress from 'cli-progress';

/** Reports the progress of a long command. */
export interface Progress {
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
export function createProgress(label: string, unit: string, options: { intervalMs?: number } = {}): Progress {
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
