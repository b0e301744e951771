/**
 * A typed reference to a port: a service one module (or the kernel, or an
 * adapter) provides and others require, resolved through the kernel's
 * container (Backstage's `createServiceRef`). A module declares the ones it
 * needs in `ports`, reads them with `deps.use(ref)`, and provides its own
 * with `provide(ref, factory)`: a new port needs no change to core.
 */
export interface PortRef<T> {
  /** Unique id, also the container token (e.g. `echo.greeter`); core's own are the names of `PortMap`. */
  readonly id: string;
  /** One line for error messages and docs. */
  readonly description: string;
  /** Carries `T` for the type checker only; never set. */
  readonly __type?: (value: T) => T;
}

/** A port reference of any type, as module declarations list them. */
// biome-ignore lint/suspicious/noExplicitAny: a list of refs to ports of different types
export type AnyPortRef = PortRef<any>;

/** Creates a port reference: `export const greeterPort = createPortRef<Greeter>({ id: 'echo.greeter', description: '…' })`. */
export function createPortRef<T>(options: { id: string; description: string }): PortRef<T> {
  return { id: options.id, description: options.description };
}

/** How a module provides a port from its service (see {@link provide}). */
export interface PortProvision<S> {
  readonly ref: AnyPortRef;
  readonly factory: (service: S) => unknown;
}

/**
 * Declares that a module provides `ref`, built lazily from its service once
 * every module's service exists: `provides: [provide(credentialsPort, (s) => …)]`.
 */
export function provide<S, T>(ref: PortRef<T>, factory: (service: S) => T): PortProvision<S> {
  return { ref, factory };
}
