export { type Acl, type AclProtocol, aclProtocols, aclSchema } from './acl.js';
export { type AddressPool, addressPoolProblem, createAddressPool } from './address-pool.js';
export { type MeshConfig, type MeshConfigInput, meshConfigSchema, meshEnv } from './config.js';
export { endpointSchema, parseEndpoint } from './endpoint.js';
export { meshModule, meshModule as default } from './module.js';
export { type InboundRule, NFTABLES_TABLE, type NftablesHooks, nftablesHooks } from './nftables-rules.js';
export { createMeshService, type MeshDeps, type MeshService, type PeerView } from './service.js';
export { PRIVATE_KEY_PLACEHOLDER, renderWgQuickConfig, type WgQuickConfig, type WgQuickPeer } from './wg-quick-config.js';
export { wireguardKeySchema } from './wireguard-key.js';
