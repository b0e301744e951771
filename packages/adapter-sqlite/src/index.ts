export { createSqliteDatabase, type SqliteDatabaseOptions, sqliteDatabaseOptions } from './database.js';
export { createSqliteVectorIndex } from './vector-index.js';
