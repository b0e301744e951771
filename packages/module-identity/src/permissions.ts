/**
 * Every permission name a delegation may carry (CONTRACT.md "Credentials").
 * `/delegate` rejects any other name with 400.
 */
export const knownPermissions = [
  'memory.read',
  'memory.write',
  'memory.forget',
  'identity.delegate',
  'secrets.read',
  'secrets.write',
  'artifacts.read',
  'artifacts.write',
  'artifacts.grant',
  'mesh.read',
  'mesh.write',
  'gateway.read',
  'gateway.write',
  'postbox.read',
  'postbox.send',
  'postbox.admin',
  'scheduler.read',
  'scheduler.write',
] as const;

/** A permission name from {@link knownPermissions}. */
export type Permission = (typeof knownPermissions)[number];
