import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';

/** Debian's chromium binary (installed by `.ci/install-chromium.sh`). */
export const CHROMIUM_PATH = process.env.AGENTINFRA_CHROMIUM ?? '/usr/bin/chromium';

/** Launches headless chromium from {@link CHROMIUM_PATH}; never downloads a browser. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: ['--no-sandbox', '--disable-background-networking'] });
}

/** A console page as the browser tests use it. */
export interface ConsolePage {
  browser: Browser;
  context: BrowserContext;
  page: Page;
  /** Content Security Policy violations the page reported (a test expects none). */
  cspErrors: string[];
}

/** Opens a 1280 × 900 page in {@link launchChromium}'s chromium that collects Content Security Policy errors. */
export async function openConsolePage(): Promise<ConsolePage> {
  const browser = await launchChromium();
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  const cspErrors: string[] = [];
  page.on('console', (message) => {
    if (/Content Security Policy/i.test(message.text())) cspErrors.push(message.text());
  });
  return { browser, context, page, cspErrors };
}

/** A scheduler callback receiver on 127.0.0.1 answering every request with `status()`; `url` is its base URL. */
export async function startCallbackReceiver(status: () => number): Promise<{ url: string; close(): Promise<void> }> {
  const server = createServer((request, response) => {
    request.resume();
    request.on('end', () => response.writeHead(status()).end());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

const AXE_TAGS = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'];

/** A violation as axe-core returns it (the fields the tests read). */
interface RawViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: Array<{ target: string[] }>;
}

/** One axe-core violation as the tests report it. */
export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  targets: string[];
}

/**
 * Runs axe-core (WCAG 2 A/AA and best-practice rules) on the page; returns
 * the serious and critical violations. axe is evaluated through the
 * DevTools protocol, which the console's CSP (rightly) does not let a
 * `<script>` tag from `page.addScriptTag` do. Only violations are
 * aggregated in full (`resultTypes`): the passes, incomplete and
 * inapplicable results the tests never read keep one node each, which
 * spares axe building a selector for every node of a large page.
 */
export async function seriousViolations(page: Page): Promise<AxeViolation[]> {
  if (!(await page.evaluate<boolean>("'axe' in window"))) await page.evaluate(axeSource);
  const violations = await page.evaluate<RawViolation[]>(
    `axe.run(document, { runOnly: { type: 'tag', values: ${JSON.stringify(AXE_TAGS)} }, resultTypes: ['violations'] }).then((result) => result.violations)`,
  );
  return violations
    .filter((violation) => violation.impact === 'serious' || violation.impact === 'critical')
    .map((violation) => ({
      id: violation.id,
      impact: violation.impact,
      help: violation.help,
      targets: violation.nodes.map((node) => node.target.join(' ')),
    }));
}
