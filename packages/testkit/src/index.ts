export * from '@agentinfra/test-services';
export { type SqlDatabaseEntry, sqlDatabases } from './sql-databases.js';
