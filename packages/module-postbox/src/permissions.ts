/**
 * The permissions agent-postbox's routes check (`<area>.<action>`). A
 * delegation may carry them; the kernel collects every module's list.
 */
export const postboxPermissions = ['postbox.read', 'postbox.send', 'postbox.admin'] as const;

/** One of {@link postboxPermissions}. */
export type PostboxPermission = (typeof postboxPermissions)[number];
