import { ConflictError } from './errors.js';

/**
 * Refuses a create when the agent already holds its quota of some kind of
 * record (a setting of the allow-list): `used >= quota` throws 409
 * `conflict` with `details: { quota, used }` and, in the message, the
 * setting and how to make room.
 * @param what the records' name (`memories`, `scheduler jobs`).
 * @param release how the agent makes room (`delete one with /job/delete first`).
 * @throws ConflictError (409) at or past the quota.
 */
export function assertWithinQuota(options: {
  agentId: string;
  used: number;
  quota: number;
  what: string;
  setting: string;
  release: string;
}): void {
  const { agentId, used, quota, what, setting, release } = options;
  if (used < quota) return;
  throw new ConflictError(`Agent "${agentId}" holds ${used} ${what}, its quota (setting ${setting}); ${release}.`, { quota, used });
}
