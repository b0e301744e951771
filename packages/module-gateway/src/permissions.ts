/**
 * The permissions agent-gateway's routes check (`<area>.<action>`). A
 * delegation may carry them; the kernel collects every module's list.
 */
export const gatewayPermissions = ['gateway.read', 'gateway.write'] as const;

/** One of {@link gatewayPermissions}. */
export type GatewayPermission = (typeof gatewayPermissions)[number];
