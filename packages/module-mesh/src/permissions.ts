/**
 * The permissions agent-mesh's routes check (`<area>.<action>`). A
 * delegation may carry them; the kernel collects every module's list.
 */
export const meshPermissions = ['mesh.read', 'mesh.write'] as const;

/** One of {@link meshPermissions}. */
export type MeshPermission = (typeof meshPermissions)[number];
