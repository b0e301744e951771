export { createSqliteDatabase, type SqliteDatabaseOptions, sqliteDatabaseOptions } from './database.js';
export { createSqliteLexicalIndex } from './lexical-index.js';
export { type ServeLock, takeServeLock } from './serve-lock.js';
export { createSqliteVectorIndex } from './vector-index.js';
