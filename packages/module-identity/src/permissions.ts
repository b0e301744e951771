/**
 * The permissions agent-identity's routes check (`<area>.<action>`). A
 * delegation may carry them; the kernel collects every module's list.
 */
export const identityPermissions = ['identity.delegate', 'secrets.read', 'secrets.write'] as const;

/** One of {@link identityPermissions}. */
export type IdentityPermission = (typeof identityPermissions)[number];
