export { isMailboxAddress, localPartProblem, normalizeAddress, parseMailboxes } from './addresses.js';
export * from './admin-schemas.js';
export { type PostboxConfig, type PostboxConfigInput, postboxConfigSchema, postboxEnv } from './config.js';
export type { InboundMessage, IngestResult } from './inbound.js';
export { composeMessage, createMailRelay, type MailRelay, RelayError } from './mail-relay.js';
export { type MessageStatus, type MessageView, messageViewSchema } from './message-view.js';
export { postboxModule, postboxModule as default } from './module.js';
export { type AttachmentInfo, type ParsedMessage, parseMimeMessage } from './parsed-message.js';
export { type PostboxPermission, postboxPermissions } from './permissions.js';
export { postboxRoutes } from './routes.js';
export {
  applyRules,
  type MailRule,
  matchesLike,
  type RuleAction,
  type RuleMatch,
  ruleActionSchema,
  ruleMatchSchema,
} from './rules.js';
export * from './schemas.js';
export { createHttpInjectionScorer, type HttpInjectionScorerOptions } from './scoring/http-scorer.js';
export { FEATURE_NAMES, type FeatureName, injectionFeatures, type MessageFeatures } from './scoring/injection-features.js';
export { INJECTION_EVIDENCE_HEADER, INJECTION_HEADER, injectionHeaders, type ScoreProvenance } from './scoring/injection-headers.js';
export { bundledInjectionModel, decodeInjectionModel, type InjectionModel } from './scoring/injection-model.js';
export type { InjectionScorer, ScoringInput } from './scoring/injection-scorer.js';
export { createLocalInjectionScorer, type InjectionExplanation, type LocalInjectionScorer } from './scoring/local-scorer.js';
export { createPostboxService, type PostboxService, type PostboxServiceOptions } from './service.js';
export type { PostboxDeps } from './service-deps.js';
export { WEBHOOK_EVENTS, type WebhookEvent } from './webhooks.js';
