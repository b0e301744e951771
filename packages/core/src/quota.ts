import { ConflictError } from './errors.js';

/**
 * The 409 `conflict` a create gets when the agent already holds its quota of
 * some kind of record (a setting of the allow-list), with `details:
 * { quota, used }` and, in the message, how to make room.
 * @param what the records' name (`memories`, `scheduler jobs`).
 * @param release how the agent makes room (`delete one with /job/delete first`).
 */
export function quotaReached(options: {
  agentId: string;
  used: number;
  quota: number;
  what: string;
  setting: string;
  release: string;
}): ConflictError {
  const { agentId, used, quota, what, setting, release } = options;
  return new ConflictError(`Agent "${agentId}" holds ${used} ${what}, its quota (setting ${setting}); ${release}.`, { quota, used });
}
