export type { UploadData, UploadInput } from './artifact-transfer.js';
export { type AgentInfraClient, type ArtifactHelpers, createClient } from './client.js';
export { type ClientOptions, DEFAULT_URL } from './client-options.js';
export { AgentInfraError } from './errors.js';
export { IDEMPOTENT_ROUTES, type RouteCall, type RouteHelpers, type RoutePath, type Routes } from './generated/routes.js';
export { DEFAULT_RETRY_POLICY, isRetryable, type RetryPolicy } from './retry-policy.js';
export type { CallOptions } from './transport.js';
export { type VerifyWebhookInput, verifyWebhook } from './webhook-verify.js';
