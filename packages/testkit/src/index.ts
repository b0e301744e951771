export * from '@agentinfra/test-services';
export { beforeFirstTransaction } from './before-first-transaction.js';
export { migrationRoundTrip, moduleMigrator } from './module-migrations.js';
export { type ReopenableDatabase, type ReopenableDatabaseEntry, reopenableDatabases, reopenablePostgres } from './reopenable-databases.js';
export { embeddedDatabase, type SqlDatabaseEntry, sqlDatabases } from './sql-databases.js';
export { findTool, TOOL_PATH, toolEnv } from './tool-path.js';
export { secretProbe, type WebhookSecretCase, webhookSecretCases } from './webhook-secret-cases.js';
