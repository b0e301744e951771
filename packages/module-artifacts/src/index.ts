export * from './admin-schemas.js';
export { artifactKeyProblem } from './artifact-key.js';
export { type ArtifactsConfig, type ArtifactsConfigInput, artifactsConfigSchema, artifactsEnv, MAX_ARTIFACT_BYTES } from './config.js';
export { artifactsModule, artifactsModule as default } from './module.js';
export { type ArtifactsPermission, artifactsPermissions } from './permissions.js';
export { artifactsRoutes } from './routes.js';
export * from './schemas.js';
export { type ArtifactsService, createArtifactsService } from './service.js';
