import { type Principal, seesWholeTargets, targetWithoutQuery } from '@agentinfra/core';
import type { AdminListJobsResponse } from './admin-schemas.js';
import type { SchedulerPermission } from './permissions.js';

/** The permission that lets a caller see a job's `callback_url` whole: the one that lets it set the URL. */
const FULL_URL_PERMISSION: SchedulerPermission = 'scheduler.write';

/**
 * A /job/list page as `principal` may see it: whole for the bridge key, a
 * device key or a delegation holding `scheduler.write`; for a delegation
 * holding only `scheduler.read`, every `callback_url` cut to origin and path
 * (a URL's query string often carries a token for the receiver, see core's
 * `seesWholeTargets`).
 */
export function jobListFor(principal: Principal | null, page: AdminListJobsResponse): AdminListJobsResponse {
  if (seesWholeTargets(principal, FULL_URL_PERMISSION)) return page;
  return { ...page, jobs: page.jobs.map((job) => ({ ...job, callback_url: targetWithoutQuery(job.callback_url) })) };
}
