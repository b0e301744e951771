import { accessSync, constants } from 'node:fs';
import { type Browser, chromium } from 'playwright-core';
import { servicesRequired } from './service-urls.js';
import { printOncePerRun } from './skip-notice.js';

/** Where Debian's `chromium` package installs the browser (`.ci/install-chromium.sh`). */
export const DEFAULT_CHROMIUM_PATH = '/usr/bin/chromium';

/**
 * Command-line switches for headless runs on a machine without a display,
 * GPU, user namespace sandbox or internet: nothing in the browser itself
 * talks to Google's services, so a page's own requests are the only traffic.
 */
export const CHROMIUM_ARGS: readonly string[] = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** The gating decision for suites that need a browser. */
export interface ChromiumAvailability {
  /** `true`: run the suites. `false`: leave them out; the one skip line has been printed. */
  available: boolean;
  /** The executable that was looked for. */
  executablePath: string;
  /** Why it cannot be used (e.g. `not found`); absent when available. */
  reason?: string;
}

/** The browser the tests use: `AGENTINFRA_TEST_CHROMIUM`, else {@link DEFAULT_CHROMIUM_PATH}. */
export function chromiumPath(): string {
  return process.env.AGENTINFRA_TEST_CHROMIUM || DEFAULT_CHROMIUM_PATH;
}

/**
 * Whether suites needing a browser run: the executable {@link chromiumPath}
 * exists and is executable. Absent: prints one `[agentinfra] skipping
 * Chromium suites: …` line per test run and returns `available: false`.
 * @throws Error naming the path when the browser is absent and
 *   `AGENTINFRA_TEST_REQUIRE_SERVICES=1` (CI), so the calling test file fails.
 * @example describe.runIf(chromiumAvailability().available)('docs page', () => { … });
 */
export function chromiumAvailability(): ChromiumAvailability {
  const executablePath = chromiumPath();
  try {
    accessSync(executablePath, constants.X_OK);
    return { available: true, executablePath };
  } catch (error) {
    const reason = (error as { code?: unknown }).code === 'ENOENT' ? 'not found' : String((error as Error).message);
    if (servicesRequired()) {
      throw new Error(
        `[agentinfra] Chromium is required (AGENTINFRA_TEST_REQUIRE_SERVICES=1) but ${executablePath} is ${reason}; ` +
          'run .ci/install-chromium.sh or set AGENTINFRA_TEST_CHROMIUM',
      );
    }
    printOncePerRun(
      'chromium',
      `[agentinfra] skipping Chromium suites: ${executablePath} ${reason}; run .ci/install-chromium.sh or set AGENTINFRA_TEST_CHROMIUM`,
    );
    return { available: false, executablePath, reason };
  }
}

/**
 * Launches the machine's Chromium headless through playwright-core with
 * {@link CHROMIUM_ARGS}; never downloads a browser. Gate the suite with
 * {@link chromiumAvailability} first; close the browser in `afterAll`.
 * @throws Error when the browser is absent (see {@link chromiumAvailability})
 *   or fails to start.
 */
export async function launchChromium(): Promise<Browser> {
  const { available, executablePath, reason } = chromiumAvailability();
  if (!available) throw new Error(`[agentinfra] Chromium at ${executablePath} is ${reason}`);
  return chromium.launch({ executablePath, headless: true, args: [...CHROMIUM_ARGS] });
}
