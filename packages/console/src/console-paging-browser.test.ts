import { mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { embeddedDatabase } from '@agentinfra/testkit';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seriousViolations } from './test-support/browser.js';
import { type ConsoleBrowserFixture, startConsoleBrowserFixture } from './test-support/browser-fixture.js';
import type { ConsoleTestServer } from './test-support/console-test-server.js';
import { seedJobs, seedMesh } from './test-support/scale-seed.js';

/** Where screenshots go (see console-browser.test.ts). */
const SCREENSHOTS = `${resolve(process.env.AGENTINFRA_CONSOLE_SCREENSHOTS ?? join(tmpdir(), 'agentinfra-console-screenshots'))}/`;
/** The page budget of docs/console.md. */
const PAGE_BUDGET_BYTES = 250 * 1024;

/** Peers of the mesh walked here: more than one page of 100, in chromium. */
const PEERS = 120;

/**
 * The scale walkthrough in chromium: 60 scheduler jobs (more than a page)
 * and a mesh of {@link PEERS} peers with one ACL each (two pages of each).
 * Every job is reachable through the Jobs table's own pager and can be
 * paused there; every ACL through the ACLs pager and every peer through the
 * peers pager; the Mesh page stays inside the budget and says why it draws
 * no graph. Complete paging and the page budget at 400 peers and 1,200 ACLs
 * are asserted over HTTP on SQLite and PostgreSQL in console-paging.test.ts;
 * this file proves the pagers work in a real browser.
 */
describe.each(embeddedDatabase())('operator console at scale in chromium on $name', ({ create }) => {
  let fixture: ConsoleBrowserFixture;
  let t: ConsoleTestServer;
  let page: Page;

  beforeAll(async () => {
    fixture = await startConsoleBrowserFixture(create, () => 200);
    ({ t, page } = fixture);
    mkdirSync(SCREENSHOTS, { recursive: true });
    await fixture.signIn();
  });

  afterAll(() => fixture?.stop());

  /** At 1280 and 390 px: no serious axe violation, no horizontal page scroll, a screenshot (SQLite run only). */
  const atBothWidths = async (file: string) => {
    for (const [width, height] of [
      [1280, 800],
      [390, 844],
    ] as const) {
      await page.setViewportSize({ width, height });
      expect(await seriousViolations(page), `${file} at ${width} px`).toEqual([]);
      expect(await page.evaluate<number>('document.documentElement.scrollWidth'), `${file} overflows at ${width} px`).toBeLessThanOrEqual(
        width,
      );
      await page.screenshot({ path: `${SCREENSHOTS}${file}-${width}.png`, fullPage: true });
    }
    await page.setViewportSize({ width: 1280, height: 900 });
    expect(fixture.cspErrors).toEqual([]);
  };

  it('reaches job 60 through the Jobs pager and pauses it there', async () => {
    await seedJobs(t, 60);
    await page.goto(`${t.server.url}/console/scheduler`);
    const jobs = page.getByRole('region', { name: 'Jobs' });
    expect(await jobs.getByRole('row').count()).toBe(51);
    expect(await jobs.getByRole('button', { name: 'Pause job-60' }).count()).toBe(0);
    await page.getByRole('link', { name: 'Next page of jobs' }).click();
    await jobs.getByRole('button', { name: 'Pause job-60' }).waitFor();
    expect(new URL(page.url()).searchParams.get('jobs_cursor')).toBeTruthy();
    expect(await jobs.getByRole('row').count()).toBe(11);
    expect(await page.getByRole('link', { name: 'Next page of jobs' }).count()).toBe(0);
    await jobs.getByRole('button', { name: 'Pause job-60' }).click();
    await jobs.getByRole('button', { name: 'Resume job-60' }).waitFor();
    expect(await page.getByRole('status').textContent()).toMatch(/Paused job job-60/);
    expect(new URL(page.url()).searchParams.get('jobs_cursor')).toBeTruthy();
    await atBothWidths('scale-scheduler-jobs-page-2');
    await page.getByRole('link', { name: 'First page of jobs' }).click();
    await jobs.getByRole('button', { name: 'Pause job-01' }).waitFor();
    expect(new URL(page.url()).searchParams.get('jobs_cursor')).toBeNull();
  });

  it('lists every peer and ACL page by page inside the budget, without a graph but saying so', async () => {
    expect(await seedMesh(t, PEERS, 1)).toBe(PEERS);
    const response = await page.goto(`${t.server.url}/console/mesh`);
    expect((await response?.body())?.byteLength).toBeLessThan(PAGE_BUDGET_BYTES);
    expect(await page.getByRole('img', { name: 'Mesh ACL graph' }).count()).toBe(0);
    await page.getByText('The graph is drawn for a mesh of up to 24 agents').waitFor();
    await atBothWidths('scale-mesh');
    // The full-page shots are tall (100 peers and 100 ACLs a page): also the top and the start of the ACLs as seen.
    await page.screenshot({ path: `${SCREENSHOTS}scale-mesh-top-1280.png` });
    await page.locator('#acls').scrollIntoViewIfNeeded();
    await page.evaluate("document.getElementById('acls').scrollIntoView()");
    await page.screenshot({ path: `${SCREENSHOTS}scale-mesh-acls-1280.png` });
    let flows = 0;
    let aclPages = 1;
    for (; ; aclPages++) {
      flows += await page.getByRole('region', { name: 'ACLs' }).locator('ul.flows li').count();
      const next = page.getByRole('link', { name: 'Next page of ACLs' });
      if ((await next.count()) === 0) break;
      expect(aclPages).toBeLessThan(5);
      const answer = await Promise.all([page.waitForNavigation(), next.click()]).then(([navigated]) => navigated);
      expect((await answer?.body())?.byteLength).toBeLessThan(PAGE_BUDGET_BYTES);
    }
    // Each ACL here is a direction of its own (one port each), so the flows listed over all pages are the ACLs.
    expect(aclPages).toBe(2);
    expect(flows).toBe(PEERS);
    await page.goto(`${t.server.url}/console/mesh`);
    let peers = 0;
    let peerPages = 1;
    for (; ; peerPages++) {
      peers += (await page.getByRole('region', { name: 'Peers' }).getByRole('row').count()) - 1;
      const next = page.getByRole('link', { name: 'Next page of peers' });
      if ((await next.count()) === 0) break;
      expect(peerPages).toBeLessThan(5);
      await Promise.all([page.waitForNavigation(), next.click()]);
    }
    expect(peerPages).toBe(2);
    expect(peers).toBe(PEERS);
  });
});
