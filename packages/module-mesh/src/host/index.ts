/**
 * The agent host's side of agent-mesh, usable as a library and wrapped by
 * `agentinfra wg-config` and `agentinfra mesh heartbeat`: the private key is
 * made and kept on the host (X25519, RFC 7748, via node:crypto); only the
 * public key goes to the server; the wg-quick file is written atomically
 * with mode 0600.
 */
export { writeConfigFile } from './atomic-file.js';
export { type MeshHeartbeatOptions, type MeshHeartbeatResult, runMeshHeartbeat } from './heartbeat-host.js';
export { MeshCallError, MeshHostError } from './host-error.js';
export { generateHostKeyPair, type HostKeyPair, loadOrCreateHostKey, publicKeyOf } from './host-keys.js';
export { type MeshConnection, meshCall, meshConnection, parseInterval } from './mesh-connection.js';
export { type DroppedEndpoint, type NameLookup, type ResolvedAddress, resolvePeerEndpoints } from './peer-endpoints.js';
export { stopSignal, waitOrStop } from './stop-signal.js';
export { DEFAULT_WG_CONFIG_PATH, runWgConfig, type WgConfigOptions, type WgConfigResult } from './wg-config-host.js';
export { fillPrivateKey } from './wg-config-text.js';
