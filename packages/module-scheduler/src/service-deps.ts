import type { ModuleDeps } from '@agentinfra/core';
import type { SchedulerConfigInput } from './config.js';

/** Ports the scheduler uses, plus its `scheduler` config section (defaults apply when absent). */
export type SchedulerDeps = ModuleDeps<
  'sql' | 'jobs' | 'clock' | 'delivery' | 'secretBox' | 'logger' | 'metrics' | 'settings',
  SchedulerConfigInput | undefined
>;
