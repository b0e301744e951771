/**
 * `agentinfra serve` with the benchmarks' synthetic embedder in process: the
 * same kernel, default modules, adapters and configuration (`AGENTINFRA_*`
 * environment) as packages/cli's `serve`, except that the embedder is
 * synthetic-embedder.ts, computed in this process instead of requested over
 * HTTP. Run as its own process (`node --import tsx
 * bench/support/in-process-embedder-server.ts`); prints `listening on
 * http://…`, stops gracefully on SIGTERM.
 */
import { createKernel, createLogger, loadServerConfig } from '@agentinfra/core';
import { defaultModules, openAdapters } from '../../packages/cli/dist/index.js';
import { syntheticEmbedder as embedder } from './synthetic-embedder.js';

const config = loadServerConfig({ modules: defaultModules });
const logger = createLogger({ level: config.core.log.level });
const { adapters, setListenUrl } = await openAdapters(config.core, logger);
await adapters.embedder?.close?.();
const kernel = createKernel({
  config: config.core,
  modules: defaultModules,
  moduleConfigs: config.modules,
  adapters: { ...adapters, embedder },
  logger,
});
process.once('SIGTERM', () => {
  kernel.stop().then(
    () => process.exit(0),
    () => process.exit(1),
  );
});
const { url } = await kernel.listen();
setListenUrl(url);
process.stdout.write(`listening on ${url} (embedder ${embedder.id} in process)\n`);
