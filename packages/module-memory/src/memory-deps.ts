import type { ModuleDeps } from '@agentinfra/core';
import type { MemoryConfigInput } from './config.js';

/** Ports the memory service uses, plus the `memory` config section (defaults apply when absent). */
export type MemoryDeps = ModuleDeps<
  'sql' | 'vectorIndex' | 'embedder' | 'teams' | 'clock' | 'logger' | 'settings',
  MemoryConfigInput | undefined
>;
