/** The one permission agent-echo's routes check. */
export const echoPermissions = ['echo.say'] as const;

/** One of {@link echoPermissions}. */
export type EchoPermission = (typeof echoPermissions)[number];
