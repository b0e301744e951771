/**
 * The permissions agent-scheduler's routes check (`<area>.<action>`). A
 * delegation may carry them; the kernel collects every module's list.
 */
export const schedulerPermissions = ['scheduler.read', 'scheduler.write'] as const;

/** One of {@link schedulerPermissions}. */
export type SchedulerPermission = (typeof schedulerPermissions)[number];
