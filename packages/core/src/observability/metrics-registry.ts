import { Counter, collectDefaultMetrics, Gauge, Histogram, type Metric, Registry } from 'prom-client';

/** Prefix of every series this server exports. */
export const METRIC_PREFIX = 'agentinfra_';

/** Common options of a metric. Label values must come from a small fixed set: never agent ids, credentials, caller addresses or paths with ids. */
export interface MetricOptions<L extends string> {
  /** `agentinfra_…`, snake_case, with the unit as suffix (`_seconds`, `_total`). */
  name: string;
  help: string;
  labelNames?: readonly L[];
}

/**
 * The server's Prometheus metrics (prom-client), one registry per kernel so
 * that several kernels in one process (tests, embedding apps) never share
 * or collide on series. Modules ask for it as the `metrics` port and create
 * their own series; asking twice for one name returns the same metric.
 */
export interface MetricsRegistry {
  /** The prom-client registry (`metrics()` gives the text exposition format). */
  readonly registry: Registry;
  counter<L extends string = never>(options: MetricOptions<L>): Counter<L>;
  /**
   * @param options.collect runs at every scrape to set the gauge's values (e.g. from the database);
   *   when it fails the gauge keeps its last values and the registry's `onCollectError` hears of it.
   */
  gauge<L extends string = never>(options: MetricOptions<L> & { collect?: (gauge: Gauge<L>) => void | Promise<void> }): Gauge<L>;
  /** @param options.buckets upper bounds in the metric's unit (seconds for durations). */
  histogram<L extends string = never>(options: MetricOptions<L> & { buckets?: readonly number[] }): Histogram<L>;
}

/** Buckets for request and call durations, in seconds (1 ms to 10 s). */
export const DURATION_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10] as const;

/**
 * prom-client's default gauges whose `_total` suffix `promtool check metrics`
 * rejects (only counters may have it); the same counts remain, by type, in
 * `agentinfra_nodejs_active_resources`, `…_handles` and `…_requests`.
 */
const MISNAMED_DEFAULT_GAUGES = ['handles', 'requests', 'resources'].map((what) => `${METRIC_PREFIX}nodejs_active_${what}_total`);

/**
 * Creates a registry with prom-client's default process metrics
 * (`agentinfra_process_cpu_seconds_total`, heap, event-loop lag, …), less
 * the three gauges `promtool check metrics` rejects for their names.
 * Its methods throw Error when a metric name lacks the `agentinfra_` prefix,
 * or one name is reused with another type.
 * @param options.onCollectError hears of a gauge whose `collect` failed (the scrape still succeeds).
 */
export function createMetricsRegistry(
  options: { defaultMetrics?: boolean; onCollectError?: (name: string, error: unknown) => void } = {},
): MetricsRegistry {
  const registry = new Registry();
  if (options.defaultMetrics !== false) {
    collectDefaultMetrics({ register: registry, prefix: METRIC_PREFIX });
    for (const name of MISNAMED_DEFAULT_GAUGES) registry.removeSingleMetric(name);
  }

  function existing<M extends Metric>(name: string, type: new (...args: never[]) => M): M | undefined {
    if (!name.startsWith(METRIC_PREFIX)) throw new Error(`Metric "${name}" must start with ${METRIC_PREFIX}.`);
    const found = registry.getSingleMetric(name);
    if (found === undefined) return undefined;
    if (!(found instanceof type)) throw new Error(`Metric "${name}" is already registered with another type.`);
    return found as M;
  }

  return {
    registry,
    counter<L extends string = never>(metric: MetricOptions<L>) {
      return (
        existing<Counter<L>>(metric.name, Counter) ??
        new Counter<L>({ name: metric.name, help: metric.help, labelNames: metric.labelNames ?? [], registers: [registry] })
      );
    },
    gauge<L extends string = never>(metric: MetricOptions<L> & { collect?: (gauge: Gauge<L>) => void | Promise<void> }) {
      const found = existing<Gauge<L>>(metric.name, Gauge);
      if (found) return found;
      const { collect } = metric;
      return new Gauge<L>({
        name: metric.name,
        help: metric.help,
        labelNames: metric.labelNames ?? [],
        registers: [registry],
        ...(collect
          ? {
              async collect(this: Gauge<L>) {
                try {
                  await collect(this);
                } catch (error) {
                  options.onCollectError?.(metric.name, error);
                }
              },
            }
          : {}),
      });
    },
    histogram<L extends string = never>(metric: MetricOptions<L> & { buckets?: readonly number[] }) {
      return (
        existing<Histogram<L>>(metric.name, Histogram) ??
        new Histogram<L>({
          name: metric.name,
          help: metric.help,
          labelNames: metric.labelNames ?? [],
          buckets: [...(metric.buckets ?? DURATION_BUCKETS)],
          registers: [registry],
        })
      );
    },
  };
}
