import { type ServeLock, takeServeLock } from '@agentinfra/adapter-sqlite';
import type { Kernel } from '@agentinfra/core';
import { CliError } from '../cli-error.js';
import { sqliteFileIn } from '../data-dir.js';
import { buildKernel } from '../server.js';
import { withProgress } from './progress.js';

/** What `migrate --reembed` needs from the memory module's service. */
interface Reembeddable {
  reembed(options: { onProgress?: (done: number, total: number) => void }): Promise<unknown>;
}

/**
 * Takes the SQLite serve lock for a re-embedding (see `takeServeLock`): a
 * server running on the same file would go on writing and searching vectors
 * of the other embedder meanwhile, and one started during it is refused.
 * @returns the held lock; null on PostgreSQL, which has no such lock (docs/operations.md says to stop the replicas).
 * @throws CliError (exit 2) when a server holds it.
 */
function holdServeLockForReembed(kernel: Kernel): ServeLock | null {
  if (kernel.sql.dialect !== 'sqlite') return null;
  const filename = sqliteFileIn(kernel.config.dataDir);
  const lock = takeServeLock({ filename });
  if (lock) return lock;
  throw new CliError(
    `migrate --reembed: a server is running on ${filename} (it holds ${filename}.serve-lock); stop it first, then run this again.`,
    2,
  );
}

/**
 * `agentinfra migrate`: applies every pending migration (safe to run from
 * several replicas at once: knex's migration lock; safe beside running
 * servers too, as migrations only add). With `--reembed`, re-embeds every
 * semantic memory with the configured embedder, showing progress on stderr
 * (count, rate, time left; periodic lines when not a terminal); on SQLite it
 * refuses (exit 2) while `serve` runs on the same file, and holds the serve
 * lock until done (see {@link holdServeLockForReembed}).
 */
export async function runMigrate(options: { config?: string; reembed?: boolean }): Promise<void> {
  const { kernel, summary } = await buildKernel({ file: options.config });
  let lock: ServeLock | null = null;
  try {
    if (options.reembed) lock = holdServeLockForReembed(kernel);
    const results = await kernel.migrate();
    for (const { module, applied } of results) {
      process.stdout.write(`${module}: ${applied.length === 0 ? 'up to date' : `applied ${applied.join(', ')}`}\n`);
    }
    if (options.reembed) {
      await withProgress('re-embedding', 'memories', (update) =>
        kernel.service<Reembeddable>('agent-memory').reembed({ onProgress: update }),
      );
      process.stdout.write(`re-embedded semantic memories (${summary})\n`);
    }
  } finally {
    await kernel.stop();
    lock?.release();
  }
}
