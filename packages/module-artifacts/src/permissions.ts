/**
 * The permissions agent-artifacts's routes check (`<area>.<action>`). A
 * delegation may carry them; the kernel collects every module's list.
 */
export const artifactsPermissions = ['artifacts.read', 'artifacts.write', 'artifacts.grant'] as const;

/** One of {@link artifactsPermissions}. */
export type ArtifactsPermission = (typeof artifactsPermissions)[number];
