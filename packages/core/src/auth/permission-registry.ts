import type { AnyModule, AnyRoute } from '../kernel/module.js';

/**
 * Every permission name (`<area>.<action>`, e.g. `memory.read`) the loaded
 * modules declare: what a delegation's `scope` may hold. Built by the kernel
 * from each module's `permissions`; a module that adds routes adds its own
 * names without touching identity or core.
 */
export interface PermissionRegistry {
  /** All names, sorted. */
  readonly names: readonly string[];
  /** Whether `name` is declared by a loaded module. */
  has(name: string): boolean;
  /** The module that declared `name`, or `undefined`. */
  moduleOf(name: string): string | undefined;
}

/**
 * Collects the permissions of `modules`.
 * @throws Error when two modules declare the same name, or a route checks a
 *   permission its module does not declare (a typo the types missed).
 */
export function createPermissionRegistry(modules: readonly AnyModule[]): PermissionRegistry {
  const owners = new Map<string, string>();
  for (const module of modules) {
    for (const name of module.permissions) {
      const owner = owners.get(name);
      if (owner !== undefined) throw new Error(`Permission "${name}" is declared by both "${owner}" and "${module.name}".`);
      owners.set(name, module.name);
    }
    for (const route of module.routes as readonly AnyRoute<unknown>[]) {
      if (route.auth.kind === 'agent' && !module.permissions.includes(route.auth.permission)) {
        throw new Error(`Route ${module.name}${route.path} checks "${route.auth.permission}", which "${module.name}" does not declare.`);
      }
    }
  }
  const names = [...owners.keys()].sort();
  return { names, has: (name) => owners.has(name), moduleOf: (name) => owners.get(name) };
}
