import { mkdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { embeddedDatabase } from '@agentinfra/testkit';
import nodemailer from 'nodemailer';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ConsoleBrowserFixture, startConsoleBrowserFixture } from './test-support/browser-fixture.js';
import { type ConsoleTestServer, MAIL_DOMAIN } from './test-support/console-test-server.js';

/** Where screenshots go (see console-browser.test.ts). */
const SCREENSHOTS = `${resolve(process.env.AGENTINFRA_CONSOLE_SCREENSHOTS ?? join(tmpdir(), 'agentinfra-console-screenshots'))}/`;

const LONG_AGENT = 'dave-very-long-agent-identifier-for-overflow-testing.example';

/** A loopback port nothing listens on (bound, then closed again). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as { port: number };
  await new Promise<void>((done) => server.close(() => done()));
  return port;
}

/** Per `.table-wrap` on the page: its label and by how many px its table is wider than the box. */
function hiddenWidths(page: Page) {
  return page
    .locator('.table-wrap')
    .evaluateAll((boxes) => boxes.map((box) => ({ label: box.getAttribute('aria-label'), hidden: box.scrollWidth - box.clientWidth })));
}

/** The characters after which a wrapped id or path may break (see soft-breaks.tsx; the browser adds `-`). */
const SEPARATORS = '/:._@-';

/**
 * Each line break in the cells matching `selector`: the character before it,
 * and whether the token it falls in (the characters between two
 * {@link SEPARATORS}, with the one ending it) would fit on one line of the
 * cell. A break at a sensible point comes after a separator; a break inside
 * a token is only acceptable when the token is wider than the cell. (Page
 * scripts are strings: the tests are compiled without the DOM library.)
 */
function lineBreaks(page: Page, selector: string): Promise<Array<{ text: string; before: string; tokenFits: boolean }>> {
  return page.evaluate(`[...document.querySelectorAll(${JSON.stringify(selector)})].flatMap((cell) => {
    const separators = ${JSON.stringify(SEPARATORS)};
    const chars = [];
    const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      for (let index = 0; index < node.textContent.length; index++) {
        const range = document.createRange();
        range.setStart(node, index);
        range.setEnd(node, index + 1);
        const rect = range.getClientRects()[0];
        if (rect) chars.push({ char: node.textContent[index], top: Math.round(rect.top), width: rect.width });
      }
    }
    const style = getComputedStyle(cell);
    const room = cell.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
    return chars.flatMap((char, index) => {
      if (!chars[index + 1] || chars[index + 1].top <= char.top) return [];
      let start = index;
      while (start > 0 && !separators.includes(chars[start - 1].char)) start--;
      let end = index;
      while (end < chars.length - 1 && !separators.includes(chars[end].char)) end++;
      const width = chars.slice(start, end + 1).reduce((sum, c) => sum + c.width, 0);
      return [{ text: cell.textContent, before: char.char, tokenFits: width <= room }];
    });
  })`);
}

/** A box in the graph's coordinates. */
interface Box {
  left: number;
  right: number;
  top: number;
  bottom: number;
}

/** Geometry of the ACL graph in its own coordinates: each arrow's ends, each node's centre and radius, each name's box. */
function graphGeometry(page: Page): Promise<{
  lines: Array<{ x1: number; y1: number; x2: number; y2: number }>;
  nodes: Array<{ name: string; cx: number; cy: number; r: number; label: Box }>;
}> {
  return page.evaluate(`(() => {
    const svg = document.querySelector('svg.acl-graph');
    const number = (element, name) => Number(element.getAttribute(name));
    return {
      lines: [...svg.querySelectorAll('g.edge line')].map((line) => ({
        x1: number(line, 'x1'), y1: number(line, 'y1'), x2: number(line, 'x2'), y2: number(line, 'y2'),
      })),
      nodes: [...svg.querySelectorAll('g.node')].map((node) => {
        const circle = node.querySelector('circle');
        const box = node.querySelector('text').getBBox();
        return {
          name: node.textContent,
          cx: number(circle, 'cx'), cy: number(circle, 'cy'), r: number(circle, 'r'),
          label: { left: box.x, right: box.x + box.width, top: box.y, bottom: box.y + box.height },
        };
      }),
    };
  })()`);
}

/**
 * The operator's third walk-through at 1280 and 390 px: a failed job's
 * error must not push the Jobs table's buttons out of view, `@every` has no
 * time zone, the ACL graph's arrows stop short of the names, one Rotate PSK
 * per pair of peers, ICMP without a port, and audit targets wrapping at
 * their separators.
 */
describe.each(embeddedDatabase())('operator console layout in chromium on $name', ({ create }) => {
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

  /** Runs `check` at 1280 × 800 and at 390 × 844, with a screenshot of each (SQLite run only). */
  const atBothWidths = async (file: string, check: (width: number) => Promise<void>) => {
    for (const [width, height] of [
      [1280, 800],
      [390, 844],
    ] as const) {
      await page.setViewportSize({ width, height });
      await check(width);
      expect(await page.evaluate<number>('document.documentElement.scrollWidth'), `${file} overflows at ${width} px`).toBeLessThanOrEqual(
        width,
      );
      await page.screenshot({ path: `${SCREENSHOTS}${file}-${width}.png`, fullPage: true });
    }
    await page.setViewportSize({ width: 1280, height: 900 });
  };

  it('fits a failed job’s error into the Jobs table at 1280 px, with Pause and Delete in view, and no zone after @every', async () => {
    await t.bridge('agent-identity/agents/create', { agent_id: LONG_AGENT, display_name: 'Dave' });
    const port = await closedPort();
    const job = { callback_url: `http://127.0.0.1:${port}/hooks/scheduler`, secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' };
    await t.bridge('agent-scheduler/job/put', { ...job, agent_id: 'alice', name: 'broken', cadence: '@every 1s', max_attempts: 1 });
    await t.bridge('agent-scheduler/job/put', {
      ...job,
      agent_id: LONG_AGENT,
      name: 'reports/daily-summary-for-the-board',
      cadence: '0 9 * * 1-5',
      timezone: 'Europe/Amsterdam',
    });
    const deadline = Date.now() + 15_000;
    while ((await t.bridge('agent-scheduler/admin/runs/list', { status: 'failed', limit: 1 })).runs.length === 0) {
      if (Date.now() > deadline) throw new Error('no failed run');
      await new Promise((done) => setTimeout(done, 100));
    }
    await t.bridge('agent-scheduler/job/pause', { agent_id: 'alice', name: 'broken' });
    const { runs } = await t.bridge('agent-scheduler/admin/runs/list', { status: 'failed', limit: 1 });
    const error: string = runs[0].error;
    expect(error).toMatch(/ECONNREFUSED/);

    await page.goto(`${t.server.url}/console/scheduler`);
    const jobs = page.locator('.table-wrap[aria-label="Jobs"]');
    const broken = jobs.getByRole('row').filter({ hasText: 'broken' });
    expect(await broken.locator('td.cadence').textContent()).toBe('@every 1s');
    expect(await jobs.getByRole('row').filter({ hasText: 'reports/' }).locator('td.cadence').textContent()).toBe(
      '0 9 * * 1-5 Europe/Amsterdam',
    );
    expect(await broken.locator('td.last-run .error-text').getAttribute('title')).toBe(error);
    expect(await broken.locator('td.last-run').textContent()).toBe(`failed ${error}`);
    await atBothWidths('layout-scheduler', async (width) => {
      if (width !== 1280) return;
      for (const box of await hiddenWidths(page)) expect(box.hidden, `${box.label} scrolls at 1280 px`).toBeLessThanOrEqual(1);
      const wrap = await jobs.boundingBox();
      for (const name of ['Resume broken', 'Delete broken']) {
        const button = await page.getByRole('button', { name }).boundingBox();
        expect((button?.x ?? 9999) + (button?.width ?? 0), `${name} is cut off`).toBeLessThanOrEqual((wrap?.x ?? 0) + (wrap?.width ?? 0));
      }
    });
  });

  it('shows one Rotate PSK per pair of peers, ICMP without a port, and arrows that stop short of the names', async () => {
    const key = () => Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('base64');
    for (const agent of ['alice', 'bob']) {
      await t.bridge('agent-mesh/peer/register', { agent_id: agent, pubkey: key(), endpoint: '192.0.2.1:51820' });
    }
    await t.bridge('agent-mesh/acl/put', { from_agent: 'bob', to_agent: 'alice', port: 8080, proto: 'tcp' });
    await t.bridge('agent-mesh/acl/put', { from_agent: 'bob', to_agent: 'alice', port: 0, proto: 'icmp' });
    await t.bridge('agent-mesh/acl/put', { from_agent: 'alice', to_agent: 'bob', port: 22, proto: 'tcp' });

    await page.goto(`${t.server.url}/console/mesh`);
    const acls = page.getByRole('region', { name: 'ACLs' });
    expect(await acls.getByRole('button', { name: /^Rotate PSK/ }).count()).toBe(1);
    const row = acls.getByRole('row').filter({ has: page.getByRole('button', { name: 'Rotate PSK of alice and bob' }) });
    expect(await row.locator('ul.flows li').allTextContents()).toEqual(['alice → bob: 22/tcp', 'bob → alice: icmp, 8080/tcp']);
    expect(await page.locator('main').textContent()).not.toMatch(/\b0\/icmp/);
    const graph = page.getByRole('img', { name: 'Mesh ACL graph' });
    expect(await graph.locator('desc').textContent()).toBe('alice may reach bob on 22/tcp; bob may reach alice on icmp, 8080/tcp');

    await atBothWidths('layout-mesh', async () => {
      const { lines, nodes } = await graphGeometry(page);
      expect(lines).toHaveLength(2);
      for (const line of lines) {
        const length = Math.hypot(line.x2 - line.x1, line.y2 - line.y1);
        const [ux, uy] = [(line.x2 - line.x1) / length, (line.y2 - line.y1) / length];
        // The arrow head (16 × 16 px: 8 × 8 marker units at stroke width 2) ends on the target's circle.
        const target = nodes.find((node) => Math.abs(Math.hypot(line.x2 - node.cx, line.y2 - node.cy) - node.r) < 1);
        expect(target, `arrow ${JSON.stringify(line)} ends on a circle`).toBeDefined();
        const points = [
          ...Array.from({ length: Math.ceil(length / 2) + 1 }, (_, step) => ({
            x: line.x1 + ux * Math.min(step * 2, length),
            y: line.y1 + uy * Math.min(step * 2, length),
          })),
          { x: line.x2 - ux * 16 - uy * 8, y: line.y2 - uy * 16 + ux * 8 },
          { x: line.x2 - ux * 16 + uy * 8, y: line.y2 - uy * 16 - ux * 8 },
        ];
        for (const node of nodes) {
          const inside = points.filter(
            (point) =>
              point.x >= node.label.left && point.x <= node.label.right && point.y >= node.label.top && point.y <= node.label.bottom,
          );
          expect(inside, `arrow ${JSON.stringify(line)} crosses the name ${node.name}`).toEqual([]);
        }
      }
    });
  });

  // Security review: a 200-character sender name pushed the message page 507 px past the viewport, and a long
  // provenance pushed the memory text and the Forget buttons out of view.
  it('wraps a long unbroken sender and provenance, keeping the page and the Forget buttons in view', async () => {
    const long = 'W'.repeat(200);
    const transport = nodemailer.createTransport({ host: '127.0.0.1', port: t.smtpPort, secure: false, ignoreTLS: true });
    await transport.sendMail({ from: `"${long}" <sender@example.com>`, to: `alice@${MAIL_DOMAIN}`, subject: 'long sender', text: 'hello' });
    transport.close();
    const memory = { agent_id: 'alice', kind: 'episode', text: 'a note', provenance: `import-${long}`, scope: ['self'] };
    expect((await t.server.call('agent-memory/mem/write', memory, { credential: t.keys.alice })).status).toBe(200);
    const { messages } = await t.bridge('agent-postbox/admin/messages/list', { agent_id: 'alice' });
    const message = (messages as Array<{ id: string; subject: string }>).find((entry) => entry.subject === 'long sender');
    expect(message).toBeDefined();
    await page.goto(`${t.server.url}/console/postbox/messages/${message?.id}`);
    await atBothWidths('layout-long-sender', async () => {});
    await page.goto(`${t.server.url}/console/memory?agent=alice`);
    await atBothWidths('layout-long-provenance', async (width) => {
      if (width === 1280)
        for (const box of await hiddenWidths(page)) expect(box.hidden, `${box.label} scrolls at 1280 px`).toBeLessThanOrEqual(1);
    });
  });

  it('wraps audit targets and agent ids at their separators, never inside a token, without overflowing', async () => {
    for (const secret of ['api_token', 'openai_api_key_for_the_production_assistant']) {
      const as = { credential: t.keys.alice };
      expect((await t.server.call('agent-identity/secrets/put', { agent_id: 'alice', key: secret, value: 'v' }, as)).status).toBe(200);
      expect((await t.server.call('agent-identity/secrets/get', { agent_id: 'alice', key: secret }, as)).status).toBe(200);
    }
    // A network call with the bridge key is audited as bridge.use (the console's own page views are not).
    expect((await t.server.call('agent-scheduler/admin/summary', {}, { credential: t.server.bridgeKey })).status).toBe(200);
    await page.goto(`${t.server.url}/console/audit`);
    const table = page.getByRole('region', { name: 'Audit events' });
    expect(
      await table.getByRole('cell', { name: 'agent:alice/secret:openai_api_key_for_the_production_assistant' }).count(),
    ).toBeGreaterThan(0);
    expect(await table.getByRole('cell', { name: 'agent-scheduler/admin/summary' }).count()).toBeGreaterThan(0);
    await atBothWidths('layout-audit', async (width) => {
      if (width === 1280)
        for (const box of await hiddenWidths(page)) expect(box.hidden, `${box.label} scrolls at 1280 px`).toBeLessThanOrEqual(1);
      const breaks = await lineBreaks(page, 'tbody td:nth-child(5), tbody td:nth-child(6)');
      expect(breaks.length, 'some targets wrap').toBeGreaterThan(0);
      expect(breaks.filter((line) => !SEPARATORS.includes(line.before) && line.tokenFits)).toEqual([]);
    });
  });
});
