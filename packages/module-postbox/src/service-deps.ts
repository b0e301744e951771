import type { ModuleDeps } from '@agentinfra/core';
import type { PostboxConfig } from './config.js';

/** Ports the postbox service uses. */
export type PostboxDeps = ModuleDeps<
  'sql' | 'clock' | 'jobs' | 'settings' | 'rateLimiter' | 'blobStore' | 'delivery' | 'secretBox' | 'agents' | 'logger' | 'metrics',
  PostboxConfig
>;
