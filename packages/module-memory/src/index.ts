export { type MemoryConfig, type MemoryConfigInput, memoryConfigSchema, memoryEnv } from './config.js';
export { memoryMigrations } from './migrations/index.js';
export { memoryModule, memoryModule as default } from './module.js';
export type { ReembedOptions, ReembedResult } from './reembed.js';
export { memoryRoutes } from './routes.js';
export * from './schemas.js';
export { createMemoryService, type EmbeddingStatus, type MemoryDeps, type MemoryService } from './service.js';
