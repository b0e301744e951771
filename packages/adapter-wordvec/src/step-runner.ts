/** Options of {@link createStepRunner}. */
export interface StepRunnerOptions {
  /** Longest run of steps between two turns of the event loop, in milliseconds (the last step may overrun it). */
  sliceMs: number;
  /** Clock in milliseconds; default `performance.now`. */
  now?: () => number;
}

/** Runs generators of bounded steps on the event loop without holding it. */
export interface StepRunner {
  /**
   * Queues `steps` and drives it to completion, a slice at a time.
   * @returns the generator's return value.
   * @throws whatever a step throws (other queued work goes on).
   */
  run<T>(steps: Iterator<unknown, T, undefined>): Promise<T>;
}

interface Job {
  steps: Iterator<unknown, unknown, undefined>;
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

/**
 * Creates a cooperative scheduler for CPU work in small steps (issue #11):
 * queued jobs advance round-robin, one slice of at most `sliceMs` per turn of
 * the event loop (in a `setImmediate` callback), so that however many jobs
 * are queued, I/O callbacks and timers wait for one slice at most and every
 * job makes progress. Work starts on the next turn, never synchronously.
 */
export function createStepRunner(options: StepRunnerOptions): StepRunner {
  const now = options.now ?? (() => performance.now());
  const queue: Job[] = [];
  let scheduled = false;

  const schedule = (): void => {
    if (scheduled || queue.length === 0) return;
    scheduled = true;
    setImmediate(slice);
  };

  function slice(): void {
    scheduled = false;
    const deadline = now() + options.sliceMs;
    while (queue.length > 0) {
      const job = queue[0] as Job;
      let finished = false;
      try {
        for (;;) {
          const step = job.steps.next();
          if (step.done) {
            finished = true;
            job.resolve(step.value);
            break;
          }
          if (now() >= deadline) break;
        }
      } catch (error) {
        finished = true;
        job.reject(error);
      }
      queue.shift();
      if (!finished) {
        queue.push(job);
        break;
      }
    }
    schedule();
  }

  return {
    run<T>(steps: Iterator<unknown, T, undefined>): Promise<T> {
      return new Promise<T>((resolve, reject) => {
        queue.push({ steps, resolve: resolve as (value: unknown) => void, reject });
        schedule();
      });
    },
  };
}
