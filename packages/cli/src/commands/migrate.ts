import cliProgress from 'cli-progress';
import { buildKernel } from '../server.js';

/** What `migrate --reembed` needs from the memory module's service. */
interface Reembeddable {
  reembed(options: { onProgress?: (done: number, total: number) => void }): Promise<unknown>;
}

/**
 * `agentinfra migrate`: applies every pending migration (safe to run from
 * several replicas at once: knex's migration lock). With `--reembed`,
 * re-embeds every semantic memory with the configured embedder, showing a
 * progress bar.
 */
export async function runMigrate(options: { config?: string; reembed?: boolean }): Promise<void> {
  const { kernel, summary } = await buildKernel({ file: options.config });
  try {
    const results = await kernel.migrate();
    for (const { module, applied } of results) {
      process.stdout.write(`${module}: ${applied.length === 0 ? 'up to date' : `applied ${applied.join(', ')}`}\n`);
    }
    if (options.reembed) {
      const bar = new cliProgress.SingleBar(
        { format: 're-embedding [{bar}] {value}/{total} memories', hideCursor: true },
        cliProgress.Presets.shades_classic,
      );
      let started = false;
      await kernel.service<Reembeddable>('agent-memory').reembed({
        onProgress: (done, total) => {
          if (!started) {
            bar.start(total, 0);
            started = true;
          }
          bar.update(done);
        },
      });
      if (started) bar.stop();
      process.stdout.write(`re-embedded semantic memories (${summary})\n`);
    }
  } finally {
    await kernel.stop();
  }
}
