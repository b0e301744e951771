export { connectionLocation } from './connection-location.js';
export { createPostgresDatabase, type PostgresDatabaseOptions, postgresDatabaseOptions } from './database.js';
export { createPgVectorIndex, type PgVectorIndexOptions, pgVectorIndexOptions } from './vector-index.js';
