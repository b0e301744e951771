export { type IdentityConfig, identityConfigSchema } from './config.js';
export { identityModule, identityModule as default } from './module.js';
export { knownPermissions, type Permission } from './permissions.js';
export { createIdentityService, type IdentityService } from './service.js';
