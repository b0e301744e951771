import { fileURLToPath } from 'node:url';

/**
 * Path of the vectors file the package builds at install (`pnpm install` runs
 * its `prepare` script, or run `pnpm --filter @agentinfra/adapter-wordvec build:vectors`):
 * `<package>/data/wordvec-sg100-q8.wv8`, the same from `src/` and `dist/`.
 */
export function defaultVectorsFile(): string {
  return fileURLToPath(new URL('../data/wordvec-sg100-q8.wv8', import.meta.url));
}
