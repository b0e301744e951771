export * from './admin-schemas.js';
export { type IdentityConfig, identityConfigSchema } from './config.js';
export { identityModule, identityModule as default } from './module.js';
export { type IdentityPermission, identityPermissions } from './permissions.js';
export { identityRoutes } from './routes.js';
export * from './schemas.js';
export { createIdentityService, type IdentityService } from './service.js';
