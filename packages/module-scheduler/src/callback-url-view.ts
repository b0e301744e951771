import type { Principal } from '@agentinfra/core';
import type { AdminListJobsResponse } from './admin-schemas.js';
import type { SchedulerPermission } from './permissions.js';

/** The permission that lets a caller see a job's `callback_url` whole: the one that lets it set the URL. */
const FULL_URL_PERMISSION: SchedulerPermission = 'scheduler.write';

/**
 * Whether `principal` sees callback URLs whole: the bridge key, a device key,
 * or a delegation holding `scheduler.write`. A delegation holding only
 * `scheduler.read` may list jobs but not change them, and a URL's query
 * string often carries a token for the receiver, so it does not see it.
 */
export function seesWholeCallbackUrls(principal: Principal | null): boolean {
  if (principal === null) return false;
  return principal.kind !== 'delegation' || principal.permissions.includes(FULL_URL_PERMISSION);
}

/**
 * `url` without its query string and fragment: origin and path
 * (`https://hooks.example.com/run?token=abc` → `https://hooks.example.com/run`).
 * Stored callback URLs never carry user info (refused at /job/put).
 */
export function callbackUrlWithoutQuery(url: string): string {
  const parsed = new URL(url);
  return `${parsed.origin}${parsed.pathname}`;
}

/**
 * A /job/list page as `principal` may see it: whole for callers that may
 * change the jobs ({@link seesWholeCallbackUrls}), else with every
 * `callback_url` cut to origin and path.
 */
export function jobListFor(principal: Principal | null, page: AdminListJobsResponse): AdminListJobsResponse {
  if (seesWholeCallbackUrls(principal)) return page;
  return { ...page, jobs: page.jobs.map((job) => ({ ...job, callback_url: callbackUrlWithoutQuery(job.callback_url) })) };
}
