import { buildKernel } from '../server.js';
import { createProgress } from './progress.js';

/** What `migrate --reembed` needs from the memory module's service. */
interface Reembeddable {
  reembed(options: { onProgress?: (done: number, total: number) => void }): Promise<unknown>;
}

/**
 * `agentinfra migrate`: applies every pending migration (safe to run from
 * several replicas at once: knex's migration lock). With `--reembed`,
 * re-embeds every semantic memory with the configured embedder, showing
 * progress on stderr (count, rate, time left; periodic lines when not a terminal).
 */
export async function runMigrate(options: { config?: string; reembed?: boolean }): Promise<void> {
  const { kernel, summary } = await buildKernel({ file: options.config });
  try {
    const results = await kernel.migrate();
    for (const { module, applied } of results) {
      process.stdout.write(`${module}: ${applied.length === 0 ? 'up to date' : `applied ${applied.join(', ')}`}\n`);
    }
    if (options.reembed) {
      const progress = createProgress('re-embedding', 'memories');
      await kernel.service<Reembeddable>('agent-memory').reembed({ onProgress: (done, total) => progress.update(done, total) });
      progress.finish();
      process.stdout.write(`re-embedded semantic memories (${summary})\n`);
    }
  } finally {
    await kernel.stop();
  }
}
