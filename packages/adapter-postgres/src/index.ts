export { connectionLocation } from './connection-location.js';
export { type ClientLogLevel, createPostgresDatabase, type PostgresDatabaseOptions, postgresDatabaseOptions } from './database.js';
export { createPgLexicalIndex, type PgLexicalIndexOptions, pgLexicalIndexOptions } from './lexical-index.js';
export { createPgVectorIndex, type PgVectorIndexOptions, pgVectorIndexOptions } from './vector-index.js';
