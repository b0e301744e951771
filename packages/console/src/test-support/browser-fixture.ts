import type { SqlDatabaseEntry } from '@agentinfra/testkit';
import { type ConsolePage, openConsolePage, startCallbackReceiver } from './browser.js';
import { type ConsoleTestServer, startConsoleTestServer } from './console-test-server.js';

/** What a console browser test runs against: the server on a fresh database, a scheduler callback receiver and a chromium page. */
export interface ConsoleBrowserFixture extends ConsolePage {
  t: ConsoleTestServer;
  /** The receiver's base URL (for `callback_url`). */
  callbacks: { url: string };
  /** Signs the page in with the bridge key through the login form and waits for the Overview. */
  signIn(): Promise<void>;
  /** Closes the browser, the receiver, the server and the database. */
  stop(): Promise<void>;
}

/**
 * Starts a {@link ConsoleBrowserFixture} on a database from `create`, the
 * receiver answering every callback with `callbackStatus()`. When a step
 * fails, what was started before it is stopped again.
 */
export async function startConsoleBrowserFixture(
  create: SqlDatabaseEntry['create'],
  callbackStatus: () => number,
): Promise<ConsoleBrowserFixture> {
  const stops: Array<() => Promise<void>> = [];
  const stop = async () => {
    for (const step of stops.splice(0).reverse()) await step();
  };
  try {
    const database = await create();
    stops.push(() => database.cleanup());
    const t = await startConsoleTestServer(database.db);
    stops.push(() => t.server.stop());
    const callbacks = await startCallbackReceiver(callbackStatus);
    stops.push(() => callbacks.close());
    const page = await openConsolePage();
    stops.push(() => page.browser.close());
    const signIn = async () => {
      await page.page.goto(`${t.server.url}/console/login`);
      await page.page.getByLabel('Bridge key').fill(t.server.bridgeKey);
      await page.page.getByRole('button', { name: 'Sign in' }).click();
      await page.page.getByRole('heading', { name: 'Overview', level: 1 }).waitFor();
    };
    return { ...page, t, callbacks, signIn, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
