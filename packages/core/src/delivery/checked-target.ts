import { InputError } from '../errors.js';
import type { HttpDelivery } from '../ports/http-delivery.js';

/**
 * Checks a caller-supplied delivery target (a webhook or callback URL)
 * against the delivery's SSRF rules (scheme, URL syntax, private
 * addresses, DNS resolution) and names the request field it came from.
 * @param field the request field holding `url` (`url`, `callback_url`), for `details.fields`.
 * @throws InputError (400) with the delivery's reason and `details.fields: [{ path: field, message }]`;
 *   a `TargetLookupFailure` (name servers failing) becomes the same 400 at registration.
 */
export async function checkTargetField(delivery: Pick<HttpDelivery, 'checkTarget'>, url: string, field: string): Promise<void> {
  try {
    await delivery.checkTarget(url);
  } catch (error) {
    if (!(error instanceof InputError)) throw error;
    throw new InputError(error.message, { fields: [{ path: field, message: error.message }] });
  }
}
