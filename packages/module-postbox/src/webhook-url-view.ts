import type { Principal } from '@agentinfra/core';
import type { PostboxPermission } from './permissions.js';
import type { ListWebhooksResponse } from './schemas.js';

/** The permission that lets a caller see a webhook's `url` whole: the one that lets it register, rotate and delete webhooks. */
const FULL_URL_PERMISSION: PostboxPermission = 'postbox.admin';

/**
 * Whether `principal` sees webhook URLs whole: the bridge key, a device key,
 * or a delegation holding `postbox.admin`. A delegation holding only
 * `postbox.read` may list webhooks but not change them, and a URL's query
 * string often carries a token for the receiver, so it does not see it
 * (the scheduler's rule for `callback_url`).
 */
export function seesWholeWebhookUrls(principal: Principal | null): boolean {
  if (principal === null) return false;
  return principal.kind !== 'delegation' || principal.permissions.includes(FULL_URL_PERMISSION);
}

/**
 * `url` without its query string and fragment: origin and path
 * (`https://hooks.example.com/mail?token=abc` → `https://hooks.example.com/mail`).
 * Stored webhook URLs never carry user info (refused at /webhook/register).
 */
export function webhookUrlWithoutQuery(url: string): string {
  const parsed = new URL(url);
  return `${parsed.origin}${parsed.pathname}`;
}

/**
 * A /webhook/list answer as `principal` may see it: whole for callers that
 * may change the webhooks ({@link seesWholeWebhookUrls}), else with every
 * `url` cut to origin and path.
 */
export function webhookListFor(principal: Principal | null, list: ListWebhooksResponse): ListWebhooksResponse {
  if (seesWholeWebhookUrls(principal)) return list;
  return { webhooks: list.webhooks.map((webhook) => ({ ...webhook, url: webhookUrlWithoutQuery(webhook.url) })) };
}
