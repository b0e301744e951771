import { sqlDatabases } from '@agentinfra/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ConsoleTestServer, MAIL_DOMAIN, startConsoleTestServer } from './test-support/console-test-server.js';

/** What an operator must never get raw: control characters other than tab and line breaks, and format characters (bidi, zero-width). */
const RAW_CONTROL = /(?![\t\n\r])\p{Cc}|\p{Cf}/u;
/** Bell, an ANSI colour and screen clear, a right-to-left override and backspaces: text that would change what the operator reads. */
const HOSTILE = 'ring\u0007 \u001b[31mred\u001b[0m \u001b[2J invoice\u202egpj.exe ok\u0008\u0008no';

/** `html` without its hidden form fields, whose values must stay exact (the forget form sends the provenance back) and are never shown. */
function shown(html: string): string {
  return html.replace(/<input type="hidden"[^>]*>/g, '');
}

describe.each(sqlDatabases())('console pages show control characters in caller-supplied text as code points on $name', ({ create }) => {
  let t: ConsoleTestServer;
  let cleanup: () => Promise<void>;
  let cookie: string;

  beforeAll(async () => {
    const fixture = await create();
    cleanup = fixture.cleanup;
    t = await startConsoleTestServer(fixture.db);
    const alice = { credential: t.keys.alice };
    const memory = { agent_id: 'alice', kind: 'semantic', text: `${HOSTILE} memory`, provenance: `import\u202e`, scope: ['self'] };
    expect((await t.server.call('agent-memory/mem/write', memory, alice)).status).toBe(200);
    await t.bridge('agent-identity/agents/create', { agent_id: 'carol', display_name: `Carol ${HOSTILE}` });
    await t.bridge('agent-identity/device/issue', { agent_id: 'carol', label: `laptop ${HOSTILE}` });
    await t.bridge('agent-postbox/ingest', {
      to: `alice@${MAIL_DOMAIN}`,
      from: `eve\u202e@example.com`,
      subject: `Subject ${HOSTILE}`,
      body: `Body ${HOSTILE}`,
      headers: { 'message-id': '<control@example.com>', 'x-note': HOSTILE },
      mime_ref: 'none',
    });
    // Registration refuses such keys now; an artifact registered before that keeps its key, and the console shows it.
    const { artifactId } = await t.uploadArtifact('reports/q1.pdf', Buffer.from('x'));
    await fixture.db.knex('artifacts_items').where({ artifact_id: artifactId }).update({ key: `reports/q1\u202efdp.exe` });
    // A refused revocation is audited with the id as sent: the audit log's target holds caller-supplied text too.
    const revoke = await t.server.call(
      'agent-identity/device/revoke',
      { device_id: 'dev_\u001b[2J\u202e' },
      { credential: t.server.bridgeKey },
    );
    expect(revoke.status).toBe(404);
    cookie = await t.signIn();
  });

  afterAll(async () => {
    await t?.server.stop();
    await cleanup?.();
  });

  const page = async (path: string) => {
    const response = await fetch(`${t.server.url}${path}`, { headers: { cookie } });
    expect(response.status, path).toBe(200);
    return response.text();
  };

  it('writes them as [U+XXXX] markers on the memory page: list, search hits, provenances and the forget confirmation', async () => {
    const list = await page('/console/memory');
    expect(shown(list), 'memory list').not.toMatch(RAW_CONTROL);
    expect(list).toContain(
      'ring<mark class="hidden-text" title="Hidden from human readers in the original"><span class="tag">hidden:</span>[U+0007]</mark>',
    );
    for (const marker of ['[U+001B]</mark>[31mred', '[U+202E]</mark>gpj.exe', '[U+0008][U+0008]</mark>no']) expect(list).toContain(marker);
    const agent = await page(`/console/memory?agent=alice&q=${encodeURIComponent('invoice red memory')}`);
    expect(shown(agent), 'memory of alice').not.toMatch(RAW_CONTROL);
    expect(agent).toContain('data-confirm="Forget all 1 memories of alice from import[U+202E]? This cannot be undone."');
    expect(agent.match(/\[U\+001B\]/g)?.length).toBeGreaterThanOrEqual(6);
    // The form still sends the exact provenance back, so forgetting works.
    expect(agent).toContain('name="provenance" value="import\u202e"');
  });

  it('forgets exactly the provenance the form names: "web " is not "web" nor "\\ufeffweb"', async () => {
    const alice = { credential: t.keys.alice };
    for (const provenance of ['web', 'web ', '\ufeffweb']) {
      const memory = {
        agent_id: 'alice',
        kind: 'semantic',
        text: `fetched from ${JSON.stringify(provenance)}`,
        provenance,
        scope: ['self'],
      };
      expect((await t.server.call('agent-memory/mem/write', memory, alice)).status).toBe(200);
    }
    const html = await page('/console/memory?agent=alice');
    // The Forget form carries the provenance exactly as stored, space and byte order mark included.
    const forms = [...html.matchAll(/<form method="post" action="\/console\/memory\/forget"[^>]*>(.*?)<\/form>/gs)].map(
      (match) => match[1] as string,
    );
    const form = forms.find((body) => body.includes('name="provenance" value="web "')) as string;
    expect(form).toBeTruthy();
    expect(forms.some((body) => body.includes('name="provenance" value="\ufeffweb"'))).toBe(true);
    const fields = Object.fromEntries(
      [...form.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)"/g)].map((match) => [match[1], match[2]]),
    );
    expect(fields).toMatchObject({ agent_id: 'alice', provenance: 'web ' });
    const forgot = await fetch(`${t.server.url}/console/memory/forget`, {
      method: 'POST',
      headers: { cookie, origin: t.server.url, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(fields as Record<string, string>).toString(),
      redirect: 'manual',
    });
    expect(forgot.status).toBe(303);
    expect(await page(forgot.headers.get('location') as string)).toContain('Forgot 1 memories of alice from web .');
    const { provenances } = await t.bridge<{ provenances: Array<{ provenance: string; memories: number }> }>(
      'agent-memory/admin/provenances/list',
      { agent_id: 'alice', limit: 100 },
    );
    const left = provenances.map((entry) => entry.provenance);
    expect(left).toContain('web');
    expect(left).toContain('\ufeffweb');
    expect(left).not.toContain('web ');
  });

  it('does the same on every other page that shows caller-supplied text', async () => {
    const message = /href="\/console\/postbox\/messages\/(msg_[^"]+)"/.exec(await page('/console/postbox'))?.[1];
    expect(message).toBeTruthy();
    const artifact = /href="\/console\/artifacts\/(art_[^"]+)"/.exec(await page('/console/artifacts'))?.[1];
    expect(artifact).toBeTruthy();
    for (const path of [
      '/console/agents',
      '/console/agents/carol',
      '/console/postbox',
      `/console/postbox/messages/${message}`,
      '/console/artifacts',
      `/console/artifacts/${artifact}`,
      '/console/audit',
    ]) {
      const html = await page(path);
      expect(shown(html), path).not.toMatch(RAW_CONTROL);
      expect(html, path).toMatch(/\[U\+(001B|202E)\]/);
    }
  });
});
