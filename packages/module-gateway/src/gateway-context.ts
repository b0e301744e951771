import type { ModuleDeps, PortMap } from '@agentinfra/core';
import type { AcmeAccounts } from './acme/acme-accounts.js';
import type { OrderProcessor } from './acme/order-processor.js';
import type { GatewayConfig } from './config.js';
import type { TxtLookup } from './txt-lookup.js';

/** Ports the gateway module asks the kernel for. */
export type GatewayPorts = 'sql' | 'clock' | 'secretBox' | 'jobs' | 'logger' | 'metrics' | 'config' | 'settings';

/** The kernel's ports plus the validated `gateway` config section. */
export type GatewayDeps = ModuleDeps<GatewayPorts, GatewayConfig>;

/** What the parts of the gateway service share. */
export interface GatewayContext {
  deps: GatewayDeps;
  config: GatewayConfig;
  logger: PortMap['logger'];
  accounts: AcmeAccounts;
  processor: OrderProcessor;
  txtLookup: TxtLookup;
}

/** Job names of the gateway module. */
export const ORDER_JOB = 'gateway.order';
export const REVOKE_JOB = 'gateway.revoke';
export const RENEW_DUE_JOB = 'gateway.renew-due';
export const RESEAL_JOB = 'gateway.reseal-keys';

/** Attempts of one revocation before it is recorded as failed. */
export const REVOKE_MAX_ATTEMPTS = 10;
/** RFC 5280 §5.3.1 CRLReason: cessationOfOperation, used when a host is released. */
export const REASON_CESSATION_OF_OPERATION = 5;
/** Longest error text stored with an order or revocation. */
export const ERROR_TEXT_LIMIT = 2_000;

/**
 * The lock (`SqlDatabase.lockInTransaction`) under which a host is bound or released, a claim of it stored,
 * an order for it started and its certificate stored: each of these sees the others' committed work.
 */
export const hostLockKey = (host: string): string => `gateway:host:${host}`;
