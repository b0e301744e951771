import { mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defaultModules } from '@agentinfra/modules';
import { chromiumAvailability, launchChromium } from '@agentinfra/test-services/chromium';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OpenApiDocument } from './openapi-document.js';
import { type DocsTestServer, startDocsTestServer } from './test-support/docs-test-server.js';

const axePath = createRequire(import.meta.url).resolve('axe-core/axe.min.js');
/** Where the screenshots go (look at them after a layout change). */
const screenshotDir = process.env.AGENTINFRA_DOCS_SCREENSHOTS ?? join(tmpdir(), 'agentinfra-docs-screenshots');

/** The browser globals the tests read inside the page (the tests' tsconfig has no DOM lib). */
interface PageGlobals {
  document: { body: unknown; documentElement: { scrollWidth: number } };
  getComputedStyle(element: unknown): { fontFamily: string };
  axe: { run(context: unknown, options: unknown): Promise<{ violations: AxeViolation[] }> };
}

interface AxeViolation {
  id: string;
  impact: string | null;
  nodes: Array<{ target: string[] }>;
}

interface Visit {
  page: Page;
  requests: string[];
  consoleErrors: string[];
}

describe.runIf(chromiumAvailability().available)('the /docs page in headless Chromium (#13)', () => {
  let t: DocsTestServer;
  let browser: Browser;
  let doc: OpenApiDocument;

  beforeAll(async () => {
    t = await startDocsTestServer();
    browser = await launchChromium();
    doc = (await (await fetch(`${t.server.url}/openapi.json`)).json()) as OpenApiDocument;
    mkdirSync(screenshotDir, { recursive: true });
  });

  afterAll(async () => {
    await browser?.close();
    await t?.stop();
  });

  async function visit(width: number, options: { bypassCSP?: boolean } = {}): Promise<Visit> {
    const context = await browser.newContext({ viewport: { width, height: 900 }, bypassCSP: options.bypassCSP ?? false });
    const page = await context.newPage();
    const requests: string[] = [];
    const consoleErrors: string[] = [];
    page.on('request', (request) => requests.push(request.url()));
    page.on('console', (message) => {
      if (message.type() === 'error') consoleErrors.push(message.text());
    });
    const response = await page.goto(`${t.server.url}/docs`, { waitUntil: 'load' });
    expect(response?.status()).toBe(200);
    return { page, requests, consoleErrors };
  }

  it('lists every module and every endpoint, fetching nothing but its own stylesheet, under a CSP that allows no script', async () => {
    const { page, requests, consoleErrors } = await visit(1280);
    const origin = new URL(t.server.url).origin;
    expect(requests.filter((url) => new URL(url).origin !== origin)).toEqual([]);
    expect(requests.map((url) => new URL(url).pathname).sort()).toEqual(['/docs', '/docs/docs.css']);
    expect(consoleErrors).toEqual([]);
    const response = await page.request.get(`${t.server.url}/docs`);
    expect(response.headers()['content-security-policy']).toMatch(/default-src 'none'; style-src 'self'/);
    expect(await page.locator('script').count()).toBe(0);
    expect(
      await page.evaluate(() => {
        const { document, getComputedStyle } = globalThis as unknown as PageGlobals;
        return getComputedStyle(document.body).fontFamily;
      }),
    ).toMatch(/system-ui/);

    for (const module of defaultModules) {
      const section = page.locator(`#module-${module.name}`);
      await expect.poll(() => section.locator('h2').textContent()).toBe(module.name);
      expect(await page.locator(`nav a[href="#module-${module.name}"]`).count()).toBe(1);
      for (const route of module.routes) {
        const path = `/functions/v1/${module.name}${route.path}`;
        const operation = doc.paths[path]!.post!;
        const article = section.locator(`article[id="${operation.operationId}"]`);
        expect(await article.locator('h3 .path').textContent(), path).toBe(path);
        expect(await section.locator(`.index a[href="#${operation.operationId}"]`).count(), path).toBe(1);
      }
    }
    expect(await page.locator('article.operation').count()).toBe(Object.keys(doc.paths).length);
    await page.screenshot({ path: join(screenshotDir, 'docs-1280.png') });
    await page.locator('#agentMemoryMemQuery').scrollIntoViewIfNeeded();
    await page.screenshot({ path: join(screenshotDir, 'docs-1280-operation.png') });
    await page.context().close();
  });

  it('fits a 390 px wide phone screen without sideways scrolling', async () => {
    const { page } = await visit(390);
    expect(await page.evaluate(() => (globalThis as unknown as PageGlobals).document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    await page.screenshot({ path: join(screenshotDir, 'docs-390.png') });
    await page.locator('#agentMemoryMemQuery').scrollIntoViewIfNeeded();
    await page.screenshot({ path: join(screenshotDir, 'docs-390-operation.png') });
    await page.locator('#errors').scrollIntoViewIfNeeded();
    await page.screenshot({ path: join(screenshotDir, 'docs-390-errors.png') });
    await page.locator('#agentPostboxRulePut').scrollIntoViewIfNeeded();
    await page.screenshot({ path: join(screenshotDir, 'docs-390-nested.png') });
    await page.context().close();
  });

  it('has no serious or critical axe-core accessibility violation', async () => {
    const { page } = await visit(1280, { bypassCSP: true });
    await page.addScriptTag({ path: axePath });
    const violations = await page.evaluate(async () => {
      const { axe, document } = globalThis as unknown as PageGlobals;
      const result = await axe.run(document, {
        runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'] },
      });
      return result.violations.map((violation) => ({
        id: violation.id,
        impact: violation.impact,
        targets: violation.nodes.slice(0, 3).map((node) => node.target.join(' ')),
      }));
    });
    expect(violations.filter((violation) => violation.impact === 'serious' || violation.impact === 'critical')).toEqual([]);
    await page.context().close();
  });

  it('answers HEAD, refuses other methods and unknown paths under /docs', async () => {
    const head = await fetch(`${t.server.url}/docs`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const post = await fetch(`${t.server.url}/docs`, { method: 'POST' });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET, HEAD');
    expect(await post.json()).toEqual({ error: { code: 'method_not_allowed', message: 'POST is not allowed here; use GET or HEAD.' } });
    const missing = await fetch(`${t.server.url}/docs/nothing.js`);
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({ error: { code: 'not_found' } });
  });
});
