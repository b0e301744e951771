import { runJobRunnerContract, runSqlDatabaseContract } from '@agentinfra/core/testing';
import { sqlDatabases } from './sql-databases.js';

for (const { name, create } of sqlDatabases()) {
  runSqlDatabaseContract({ name, create });
  runJobRunnerContract({ name, create });
}
