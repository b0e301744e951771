import type { IdentityService } from '@agentinfra/module-identity';
import type { MemoryService } from '@agentinfra/module-memory';
import type { PostboxService } from '@agentinfra/module-postbox';
import { sqlDatabases } from '@agentinfra/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ConsoleTestServer, startConsoleTestServer } from './test-support/console-test-server.js';
import { inBatches, jobName, peerName, seedJobs, seedMesh } from './test-support/scale-seed.js';

const FORM = 'application/x-www-form-urlencoded';
/** The page budget of docs/console.md. */
const PAGE_BUDGET_BYTES = 250 * 1024;

/** `html` with the entities the console's JSX writes in attributes and text turned back into characters. */
function decodeEntities(html: string): string {
  return html
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
}

/** The href of the link labelled `label`, or null. */
function link(html: string, label: string): string | null {
  const match = new RegExp(`<a href="([^"]*)">${label}</a>`).exec(html);
  return match ? decodeEntities(match[1] as string) : null;
}

/** The HTML of the table captioned `caption` (its scrolling box), or ''. */
function table(html: string, caption: string): string {
  const start = html.indexOf(`<section class="table-wrap" aria-label="${caption}"`);
  return start < 0 ? '' : html.slice(start, html.indexOf('</section>', start));
}

/** Every match of `pattern` (global) in `text`. */
function all(text: string, pattern: RegExp): string[] {
  return [...text.matchAll(pattern)].map((match) => match[0]);
}

/**
 * Every console list pages through its whole data (#16 scale walkthrough):
 * no table is fetched once with a fixed limit and cut silently; pages with
 * several tables page each on its own cursor parameter, and the Mesh page
 * stays inside the 250 KB budget at 400 peers and 1,200 ACLs.
 */
describe.each(sqlDatabases())('console paging on $name', ({ create }) => {
  let t: ConsoleTestServer;
  let cleanup: () => Promise<void>;
  let cookie: string;

  beforeAll(async () => {
    const fixture = await create();
    cleanup = fixture.cleanup;
    t = await startConsoleTestServer(fixture.db);
    cookie = await t.signIn();
  }, 60_000);

  afterAll(async () => {
    await t?.server.stop();
    await cleanup?.();
  });

  /** GETs a console path (or a pager's href); throws unless 200. */
  const get = async (path: string) => {
    const response = await fetch(`${t.server.url}${path}`, { headers: { cookie }, redirect: 'manual' });
    const html = await response.text();
    if (response.status !== 200) throw new Error(`GET ${path}: ${response.status} ${html.slice(0, 300)}`);
    return { html, bytes: Buffer.byteLength(html) };
  };

  /** POSTs a console form; returns the redirect's location. */
  const post = async (path: string, html: string, fields: Record<string, string>) => {
    const csrf = /name="_csrf" value="([^"]+)"/.exec(html)?.[1] ?? '';
    const response = await fetch(`${t.server.url}${path}`, {
      method: 'POST',
      headers: { cookie, origin: t.server.url, 'content-type': FORM },
      body: new URLSearchParams({ _csrf: csrf, ...fields }).toString(),
      redirect: 'manual',
    });
    await response.text();
    expect(response.status, `POST ${path}`).toBe(303);
    return response.headers.get('location') ?? '';
  };

  /** Follows the pager labelled `label` from `path`; returns each page's HTML, the first first. */
  const walk = async (path: string, label: string, limit = 50) => {
    const pages: Array<{ html: string; bytes: number; path: string }> = [];
    for (let next: string | null = path; next && pages.length < limit; ) {
      const page = await get(next);
      pages.push({ ...page, path: next });
      next = link(page.html, label);
    }
    return pages;
  };

  it('pages the Scheduler’s jobs on their own cursor, reaching job 60, and pausing it returns to that page', async () => {
    await seedJobs(t, 60);
    const pages = await walk('/console/scheduler', 'Next page of jobs');
    expect(pages).toHaveLength(2);
    const names = pages.map((page) => all(table(page.html, 'Jobs'), /job-\d\d/g));
    expect(new Set(names[0]).size).toBe(50);
    expect([...new Set(names.flat())].sort()).toEqual(Array.from({ length: 60 }, (_, index) => jobName(index)));
    const second = pages[1] as { html: string; path: string };
    expect(second.path).toMatch(/^\/console\/scheduler\?jobs_cursor=[^&]+#jobs$/);
    expect(table(second.html, 'Jobs')).toContain('aria-label="Pause job-60"');
    // The runs keep their own pager (none here: there are no runs yet), and the runs filter keeps the jobs page.
    expect(link(second.html, 'Next page of runs')).toBeNull();
    expect(second.html).toMatch(/<input type="hidden" name="jobs_cursor" value="[^"]+"\/?>/);
    const jobsCursor = new URL(second.path, t.server.url).searchParams.get('jobs_cursor') as string;
    const location = await post('/console/scheduler/jobs/pause', second.html, {
      agent_id: 'alice',
      name: 'job-60',
      jobs_cursor: jobsCursor,
    });
    expect(location).toBe(`/console/scheduler?${new URLSearchParams({ jobs_cursor: jobsCursor })}`);
    const { jobs } = await t.bridge('agent-scheduler/admin/jobs/list', { agent_id: 'alice', limit: 500 });
    expect(jobs.find((job: { name: string }) => job.name === 'job-60')?.status).toBe('paused');
    const back = await get(location);
    expect(table(back.html, 'Jobs')).toContain('aria-label="Resume job-60"');
  });

  it('pages the Mesh’s peers and ACLs at 400 peers and 1,200 ACLs, inside the page budget, and says why there is no graph', {
    timeout: 180_000,
  }, async () => {
    const aclCount = await seedMesh(t, 400);
    expect(aclCount).toBe(1_200);
    const peerPages = await walk('/console/mesh', 'Next page of peers');
    const peers = new Set(peerPages.flatMap((page) => all(table(page.html, 'Peers'), /peer-\d{3}/g)));
    expect(peers.size).toBe(400);
    expect(peers.has(peerName(399))).toBe(true);
    // The ACL pager of the second peers page keeps that page of peers.
    const aclPages = await walk((peerPages[1] as { path: string }).path, 'Next page of ACLs');
    expect(aclPages.length).toBeGreaterThan(1);
    for (const page of aclPages.slice(1)) expect(new URL(page.path, t.server.url).searchParams.get('cursor')).toBeTruthy();
    const flows = new Set(aclPages.flatMap((page) => all(table(page.html, 'ACLs'), /peer-\d{3} → peer-\d{3}: 22\/tcp/g)));
    expect(flows.size).toBe(1_200);
    for (const page of [...peerPages, ...aclPages]) {
      expect(page.bytes, `${page.path} is over the budget`).toBeLessThan(PAGE_BUDGET_BYTES);
      expect(page.html).not.toContain('<svg');
      expect(page.html).toContain('this one has 400 peers and 1200 ACLs, so it is not drawn. The tables list all of them.');
    }
    // Rotating a pair's PSK returns to the pages it was rotated from.
    const last = aclPages[aclPages.length - 1] as { html: string; path: string };
    const here = new URL(last.path, t.server.url).searchParams;
    const pair = /name="a" value="(peer-\d{3})"\/?><input type="hidden" name="b" value="(peer-\d{3})"/.exec(last.html);
    expect(pair).not.toBeNull();
    const location = await post('/console/mesh/psk/rotate', last.html, {
      cursor: here.get('cursor') ?? '',
      acls_cursor: here.get('acls_cursor') ?? '',
      a: pair?.[1] ?? '',
      b: pair?.[2] ?? '',
    });
    expect(new URL(location, t.server.url).searchParams.get('acls_cursor')).toBe(here.get('acls_cursor'));
  });

  it('lists the mesh’s refusals and lifts one, so the refused agent may grant access again', async () => {
    const pubkey = (seed: string) => Buffer.alloc(32, seed).toString('base64');
    for (const agent of ['alice', 'bob'] as const) {
      await t.bridge('agent-mesh/peer/register', { agent_id: agent, pubkey: pubkey(agent), endpoint: '192.0.2.9:51820' });
    }
    const acl = { from_agent: 'alice', to_agent: 'bob', port: 8080, proto: 'tcp' };
    await t.bridge('agent-mesh/acl/put', acl);
    expect((await t.server.call('agent-mesh/acl/revoke', acl, { credential: t.keys.alice })).body).toEqual({ revoked: 1 });
    expect((await t.server.call('agent-mesh/acl/put', acl, { credential: t.keys.bob })).status).toBe(409);

    const page = await get('/console/mesh');
    const refusals = table(page.html, 'Refusals');
    expect(refusals).toContain('<td>alice</td><td>bob</td>');
    expect(refusals).toContain('aria-label="Lift the refusal of bob by alice"');
    const location = await post('/console/mesh/acl/accept', page.html, { from_agent: 'alice', to_agent: 'bob' });
    expect(location).toBe('/console/mesh');
    const back = await get(location);
    expect(decodeEntities(back.html)).toContain('bob may grant alice access again.');
    expect(table(back.html, 'Refusals')).toBe('');
    expect(back.html).toContain('<p class="empty">No refusals.</p>');
    expect((await t.server.call('agent-mesh/acl/put', acl, { credential: t.keys.bob })).status).toBe(200);
  });

  it('pages an agent’s devices and delegations on their own cursors', async () => {
    // Seeded in-process (the identity routes are tested in packages/module-identity); the delegations over HTTP, as alice.
    const identity = t.server.kernel.service<IdentityService>('agent-identity');
    await identity.createAgent({ agent_id: 'carol', display_name: 'Carol' });
    await inBatches(60, 10, (index) => identity.issueDevice({ agent_id: 'carol', label: `device-${index + 1}` }));
    const expires = new Date(Date.now() + 86_400_000).toISOString();
    await inBatches(55, 10, (index) => identity.createAgent({ agent_id: `helper-${index + 1}`, display_name: 'Helper' }));
    await inBatches(55, 5, async (index) => {
      const response = await t.server.call(
        'agent-identity/delegate',
        { from_agent: 'alice', to_agent: `helper-${index + 1}`, scope: ['memory.read'], expires_at: expires },
        { credential: t.keys.alice },
      );
      expect(response.status, JSON.stringify(response.body)).toBe(200);
    });
    const devices = await walk('/console/agents/carol', 'Next page of devices');
    expect(devices).toHaveLength(2);
    expect(new Set(devices.flatMap((page) => all(table(page.html, 'Devices'), /device-\d+/g))).size).toBe(60);
    const delegations = await walk('/console/agents/alice', 'Next page of delegations');
    expect(delegations).toHaveLength(2);
    expect(new Set(delegations.flatMap((page) => all(table(page.html, 'Delegations'), /helper-\d+/g))).size).toBe(55);
    expect(link((delegations[0] as { html: string }).html, 'Next page of devices')).toBeNull();
  });

  it('pages a mailbox list’s addresses and an agent’s provenances', async () => {
    // Seeded in-process (the postbox and memory routes are tested in their packages).
    const mailboxes = t.server.kernel.service<PostboxService>('agent-postbox');
    await inBatches(55, 5, (index) => mailboxes.alloc({ agent_id: 'alice', local_part: `box${index + 1}` }));
    const { addresses } = await t.bridge('agent-postbox/admin/addresses/list', { limit: 500 });
    expect(addresses.length).toBeGreaterThan(50);
    const postbox = await walk('/console/postbox', 'Next page of addresses');
    expect(postbox).toHaveLength(2);
    const shown = new Set(postbox.flatMap((page) => all(table(page.html, 'Addresses'), /[a-z0-9]+@agents\.test/g)));
    expect(shown.size).toBe(addresses.length);

    const memory = t.server.kernel.service<MemoryService>('agent-memory');
    await inBatches(101, 10, (index) =>
      memory.write({ agent_id: 'bob', kind: 'semantic', text: `fact ${index}`, provenance: `source-${index + 1}`, scope: ['self'] }),
    );
    const provenances = await walk('/console/memory?agent=bob', 'Next page of provenances');
    expect(provenances).toHaveLength(2);
    expect(new Set(provenances.flatMap((page) => all(table(page.html, 'Provenances'), /source-\d+/g))).size).toBe(101);
  });
});
