import { type Principal, seesWholeTargets, targetWithoutQuery } from '@agentinfra/core';
import type { PostboxPermission } from './permissions.js';
import type { ListWebhooksResponse } from './schemas.js';

/** The permission that lets a caller see a webhook's `url` whole: the one that lets it register, rotate and delete webhooks. */
const FULL_URL_PERMISSION: PostboxPermission = 'postbox.admin';

/**
 * A /webhook/list answer as `principal` may see it: whole for the bridge
 * key, a device key or a delegation holding `postbox.admin`; for a
 * delegation holding only `postbox.read`, every `url` cut to origin and path
 * (a URL's query string often carries a token for the receiver; the
 * scheduler's rule for `callback_url`, see core's `seesWholeTargets`).
 */
export function webhookListFor(principal: Principal | null, list: ListWebhooksResponse): ListWebhooksResponse {
  if (seesWholeTargets(principal, FULL_URL_PERMISSION)) return list;
  return { webhooks: list.webhooks.map((webhook) => ({ ...webhook, url: targetWithoutQuery(webhook.url) })) };
}
