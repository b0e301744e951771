export { createSqliteDatabase, type SqliteDatabaseOptions, sqliteDatabaseOptions } from './database.js';
export { createSqliteLexicalIndex } from './lexical-index.js';
export { createSqliteVectorIndex } from './vector-index.js';
