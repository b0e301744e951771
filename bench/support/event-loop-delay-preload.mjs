/**
 * Preload for a benchmarked server (`node --import <this file> …`, spawned
 * with an IPC channel): records `perf_hooks.monitorEventLoopDelay` with a
 * 1 ms resolution in the server process itself and answers IPC messages
 * `{ eventLoopDelay: 'reset' }` (start a new window) and
 * `{ eventLoopDelay: 'report' }` with `{ eventLoopDelay: { p50, p99, max,
 * mean, count } }`: milliseconds between two turns of the sampling timer
 * over the window, so an idle loop reads about 1 ms and a loop held for
 * 80 ms reads about 80 ms. Without an IPC channel it does nothing. The
 * channel is unref'd, so it never keeps the server alive.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';

if (typeof process.send === 'function') {
  const histogram = monitorEventLoopDelay({ resolution: 1 });
  histogram.enable();
  const ms = (nanoseconds) => Number((nanoseconds / 1e6).toFixed(2));
  process.on('message', (message) => {
    if (message?.eventLoopDelay === 'reset') {
      histogram.reset();
      process.send({ eventLoopDelay: 'reset' });
    } else if (message?.eventLoopDelay === 'report') {
      process.send({
        eventLoopDelay: {
          p50: ms(histogram.percentile(50)),
          p99: ms(histogram.percentile(99)),
          max: ms(histogram.max),
          mean: ms(histogram.mean),
          count: histogram.count,
        },
      });
    }
  });
  process.channel?.unref();
}
