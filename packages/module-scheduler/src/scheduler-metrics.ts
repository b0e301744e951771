import type { MetricsRegistry } from '@agentinfra/core';

/** How one callback attempt ended: `succeeded` (2xx), `retrying` (failed, attempts left), `failed` (failed, the last attempt). */
export type AttemptOutcome = 'succeeded' | 'retrying' | 'failed';

/** The scheduler's series. */
export interface SchedulerMetrics {
  /** Fires that became runs (a job's instant came and was claimed). */
  fires: { inc(): void };
  /** Callback attempts by outcome. */
  attempts: { inc(labels: { outcome: AttemptOutcome }): void };
}

/** Registers `agentinfra_scheduler_fires_total` and `agentinfra_scheduler_attempts_total{outcome}`. */
export function createSchedulerMetrics(metrics: MetricsRegistry): SchedulerMetrics {
  return {
    fires: metrics.counter({ name: 'agentinfra_scheduler_fires_total', help: 'Scheduler fires that became runs.' }),
    attempts: metrics.counter<'outcome'>({
      name: 'agentinfra_scheduler_attempts_total',
      help: 'Scheduler callback attempts by outcome: succeeded, retrying (attempts left) or failed (the last attempt).',
      labelNames: ['outcome'],
    }),
  };
}
