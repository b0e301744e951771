import { InputError } from '../errors.js';
import type { Embedder } from '../ports/embedder.js';
import type { HttpDelivery } from '../ports/http-delivery.js';
import type { CoreMetrics } from './core-metrics.js';

/** The embedder, timing each call into `agentinfra_embedder_duration_seconds`. */
export function observedEmbedder(embedder: Embedder, metrics: CoreMetrics): Embedder {
  const align = embedder.alignmentScores?.bind(embedder);
  return {
    get id() {
      return embedder.id;
    },
    get dimensions() {
      return embedder.dimensions;
    },
    async embed(options) {
      const stop = metrics.embedderDuration.startTimer({ operation: 'embed' });
      try {
        return await embedder.embed(options);
      } finally {
        stop();
      }
    },
    ...(align
      ? {
          async alignmentScores(options: { query: string; texts: readonly string[] }) {
            const stop = metrics.embedderDuration.startTimer({ operation: 'align' });
            try {
              return await align(options);
            } finally {
              stop();
            }
          },
        }
      : {}),
    ...(embedder.close ? { close: () => embedder.close?.() ?? Promise.resolve() } : {}),
  };
}

/** Source of a delivery from its event type: `message.*` are postbox webhooks, `job.*` scheduler callbacks. */
function sourceOf(type: string): string {
  if (type.startsWith('message.')) return 'postbox';
  if (type.startsWith('job.')) return 'scheduler';
  return 'other';
}

/** The delivery port, counting each attempt into `agentinfra_webhook_deliveries_total` by source and outcome. */
export function observedDelivery(delivery: HttpDelivery, metrics: CoreMetrics): HttpDelivery {
  return {
    checkTarget: (url) => delivery.checkTarget(url),
    async send(options) {
      const source = sourceOf(options.type);
      try {
        const result = await delivery.send(options);
        metrics.deliveries.inc({ source, outcome: result.ok ? 'delivered' : 'rejected' });
        return result;
      } catch (error) {
        metrics.deliveries.inc({ source, outcome: error instanceof InputError ? 'refused' : 'error' });
        throw error;
      }
    },
  };
}
