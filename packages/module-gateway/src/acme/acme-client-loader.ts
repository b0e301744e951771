import type acme from 'acme-client';

/** The acme-client module: `Client`, `crypto`, `axios` and the rest of its exports. */
export type AcmeClientModule = typeof acme;

let loading: Promise<AcmeClientModule> | undefined;

/**
 * acme-client, imported on the first call (the same promise after). Every
 * `agentinfra` CLI command imports this package for its migrations and
 * config schema only, and acme-client brings axios, node-forge,
 * @peculiar/x509 and the asn1 packages (about 0.35 s of CPU) that only a
 * running server's orders and revocations use; so the package imports it
 * nowhere but here, and for its types (`import type`).
 */
export function loadAcmeClient(): Promise<AcmeClientModule> {
  loading ??= import('acme-client').then((module) => module.default);
  return loading;
}
