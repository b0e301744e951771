export { type AddressClass, type AddressVerdict, classifyAddress } from './address-policy.js';
export { checkTargetField } from './checked-target.js';
export { createHttpDelivery, type HttpDeliveryOptions, httpDeliveryOptionsSchema } from './http-delivery.js';
export {
  type HostResolver,
  type ResolvedAddress,
  systemResolver,
  TargetLookupFailure,
} from './target-guard.js';
export { seesWholeTargets, targetWithoutQuery } from './target-view.js';
export {
  newWebhookSecret,
  signWebhook,
  WEBHOOK_SECRET_PREFIX,
  webhookSecretSchema,
  webhookSigningKey,
} from './webhook-signature.js';
