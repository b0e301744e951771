import type { EnvBinding } from '@agentinfra/core';
import { z } from 'zod';

/** The `memory` section of the config. */
export const memoryConfigSchema = z.object({
  /** Largest memory `text` in UTF-8 bytes; a longer text is refused with 413 `payload_too_large`. */
  maxTextBytes: z.number().int().min(1).max(1_048_576).default(32_768),
  /** Largest kv `value` in UTF-8 bytes of its JSON form; a larger value is refused with 413 `payload_too_large`. */
  maxValueBytes: z.number().int().min(1).max(1_048_576).default(65_536),
  /** Memories embedded per batch by `reembed` (rows read, embedded and indexed at a time). */
  reembedBatchSize: z.number().int().min(1).max(10_000).default(256),
});
/** The validated `memory` config section. */
export type MemoryConfig = z.output<typeof memoryConfigSchema>;
/** The `memory` config section as written in `agentinfra.config.json` (every field optional). */
export type MemoryConfigInput = z.input<typeof memoryConfigSchema>;

/** Environment variables of the memory section. */
export const memoryEnv: readonly EnvBinding[] = [
  { name: 'AGENTINFRA_MEMORY_MAX_TEXT_BYTES', path: ['maxTextBytes'], type: 'integer' },
  { name: 'AGENTINFRA_MEMORY_MAX_VALUE_BYTES', path: ['maxValueBytes'], type: 'integer' },
];
