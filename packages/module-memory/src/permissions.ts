/**
 * The permissions agent-memory's routes check (`<area>.<action>`). A
 * delegation may carry them; the kernel collects every module's list.
 */
export const memoryPermissions = ['memory.read', 'memory.write', 'memory.forget'] as const;

/** One of {@link memoryPermissions}. */
export type MemoryPermission = (typeof memoryPermissions)[number];
