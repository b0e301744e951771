export { createSqliteDatabase, type SqliteDatabaseOptions, sqliteDatabaseOptions } from './database.js';
export { type ServeLock, takeServeLock } from './file-lock.js';
export { createSqliteLexicalIndex } from './lexical-index.js';
export { quickCheckFile } from './quick-check.js';
export { createSqliteVectorIndex } from './vector-index.js';
