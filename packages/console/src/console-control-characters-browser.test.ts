import { mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { embeddedDatabase } from '@agentinfra/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seriousViolations } from './test-support/browser.js';
import { type ConsoleBrowserFixture, startConsoleBrowserFixture } from './test-support/browser-fixture.js';

/** Where screenshots go (see console-browser.test.ts). */
const SCREENSHOTS = `${resolve(process.env.AGENTINFRA_CONSOLE_SCREENSHOTS ?? join(tmpdir(), 'agentinfra-console-screenshots'))}/`;

/** A memory that would ring, recolour, clear, reverse and erase what the operator reads if shown raw. */
const HOSTILE = 'ring\u0007 \u001b[31mred\u001b[0m \u001b[2J invoice\u202egpj.exe ok\u0008\u0008no';

describe.each(embeddedDatabase())('control characters on the memory page in chromium on $name', ({ create }) => {
  let fixture: ConsoleBrowserFixture;
  const dialogs: string[] = [];

  beforeAll(async () => {
    fixture = await startConsoleBrowserFixture(create, () => 200);
    fixture.page.on('dialog', (dialog) => {
      dialogs.push(dialog.message());
      void dialog.accept();
    });
    mkdirSync(SCREENSHOTS, { recursive: true });
  });

  afterAll(() => fixture?.stop());

  it('shows them as marked code points, asks with them in the confirmation, and forgets the exact provenance', async () => {
    const { t, page } = fixture;
    const memory = { agent_id: 'alice', kind: 'episode', text: HOSTILE, provenance: 'import\u202e', scope: ['self'] };
    expect((await t.server.call('agent-memory/mem/write', memory, { credential: t.keys.alice })).status).toBe(200);
    await fixture.signIn();
    await page.goto(`${t.server.url}/console/memory?agent=alice`);
    const cell = page.locator('td.text').first();
    expect(await cell.innerText()).toBe(
      'ringhidden:[U+0007] hidden:[U+001B][31mredhidden:[U+001B][0m hidden:[U+001B][2J invoicehidden:[U+202E]gpj.exe okhidden:[U+0008][U+0008]no',
    );
    expect(await cell.locator('mark.hidden-text').count()).toBe(6);
    expect(await seriousViolations(page)).toEqual([]);
    await page.screenshot({ path: `${SCREENSHOTS}control-characters-memory.png`, fullPage: true });
    await page.getByRole('button', { name: 'Forget 1 memories from import[U+202E]' }).click();
    await page.getByText('Forgot 1 memories of alice from import[U+202E].').waitFor();
    expect(dialogs).toEqual(['Forget all 1 memories of alice from import[U+202E]? This cannot be undone.']);
    expect(fixture.cspErrors).toEqual([]);
  });
});
