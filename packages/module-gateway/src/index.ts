export { trustAcmeServerCa } from './acme/acme-http.js';
export { type AcmeProblem, AcmeProblemError } from './acme/problem-document.js';
export * from './admin-schemas.js';
export {
  type CertificateKeyType,
  type GatewayConfig,
  type GatewayConfigInput,
  gatewayConfigSchema,
  gatewayEnv,
  LETS_ENCRYPT_STAGING,
} from './config.js';
export type { DnsProvider } from './dns01/dns-provider.js';
export { createRfc2136DnsProvider, DnsUpdateError, type Rfc2136Options, rfc2136OptionsSchema } from './dns01/rfc2136-provider.js';
export { type TsigAlgorithm, tsigAlgorithmSchema } from './dns01/tsig.js';
export { CLAIM_RECORD_PREFIX, hostnameSchema, normalizeHostname } from './hostname.js';
export { ipListSchema, normalizeIp } from './ip-addresses.js';
export { createGatewayModule, gatewayModule, gatewayModule as default } from './module.js';
export { type GatewayPermission, gatewayPermissions } from './permissions.js';
export { gatewayRoutes } from './routes.js';
export * from './schemas.js';
export { createGatewayService, type GatewayExtensions, type GatewayService } from './service.js';
export { createTxtLookup, type TxtLookup, type TxtLookupResult } from './txt-lookup.js';
