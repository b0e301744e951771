import type { SqlDatabase } from '@agentinfra/core';
import { afterAll, beforeAll } from 'vitest';
import { type PostboxTestServer, type PostboxTestServerOptions, startPostboxTestServer } from './postbox-test-server.js';

/** Options of {@link usePostboxServer}: those of {@link startPostboxTestServer} but the database. */
export type UsePostboxServerOptions = Omit<PostboxTestServerOptions, 'db'>;

/** The server {@link usePostboxServer} started, and the database it runs on. */
export interface UsedPostboxServer extends PostboxTestServer {
  db: SqlDatabase;
}

/**
 * Creates a database with `create` and starts a {@link PostboxTestServer} on it
 * before the tests of the enclosing `describe`, then stops the server and cleans
 * the database up after them (call it in the describe's body).
 *
 * `options` may be a function, called in that `beforeAll`, for options that
 * depend on something an earlier `beforeAll` of the describe started (a relay's
 * port). Vitest runs `beforeAll` hooks in the order they were registered and
 * `afterAll` hooks in reverse, so what the server needs is started in a
 * `beforeAll` registered before this call, and what must end before the server
 * stops is ended in an `afterAll` registered after it.
 * @param create makes a fresh database (an entry's `create` of `sqlDatabases()`); `cleanup` removes it.
 * @returns the server with `db`, whose fields are set once that describe's `beforeAll` has run.
 */
export function usePostboxServer(
  create: () => Promise<{ db: SqlDatabase; cleanup(): Promise<void> }>,
  options: UsePostboxServerOptions | (() => UsePostboxServerOptions) = {},
): UsedPostboxServer {
  const used = {} as UsedPostboxServer;
  let cleanup: (() => Promise<void>) | undefined;
  beforeAll(async () => {
    const fixture = await create();
    cleanup = fixture.cleanup;
    used.db = fixture.db;
    const resolved = typeof options === 'function' ? options() : options;
    Object.assign(used, await startPostboxTestServer({ ...resolved, db: fixture.db }));
  });
  afterAll(async () => {
    await used.stop?.();
    await cleanup?.();
  });
  return used;
}
