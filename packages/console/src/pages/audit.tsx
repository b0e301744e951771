import { Pager, Table, when } from '../components.js';
import { type ConsoleApp, frameOf, type PageDeps } from '../context.js';
import { Layout } from '../layout.js';
import { Revealed } from '../revealed.js';
import { breakAfterSeparators } from '../soft-breaks.js';

interface AuditRow {
  seq: number;
  time: string;
  actor: { kind: string; id: string | null; agent_id: string | null };
  agent_id: string | null;
  action: string;
  target: string | null;
  outcome: string;
  client: string | null;
}

/** Audit: the audit log newest first, filterable by agent and action. */
export function registerAudit(app: ConsoleApp, { api, base }: PageDeps): void {
  app.get('/audit', async (c) => {
    const agent = c.req.query('agent') || undefined;
    const action = c.req.query('action') || undefined;
    const cursor = c.req.query('cursor') || null;
    const { events, next_cursor } = await api<{ events: AuditRow[]; next_cursor: string | null }>('agent-identity/audit/list', {
      ...(agent ? { agent_id: agent } : {}),
      ...(action ? { action } : {}),
      limit: 50,
      cursor,
    });
    return c.html(
      <Layout frame={frameOf(c, base)} title="Audit" current="Audit">
        <form method="get" action={`${base}/audit`} class="toolbar">
          <label for="audit-agent">Agent</label>
          <input id="audit-agent" name="agent" value={agent ?? ''} />
          <label for="audit-action">Action</label>
          <input id="audit-action" name="action" value={action ?? ''} placeholder="e.g. device.issue" />
          <button type="submit">Filter</button>
        </form>
        <Table
          caption="Audit events"
          head={['Time', 'Action', 'Outcome', 'Actor', 'Agent', 'Target', 'Client']}
          empty="No events match."
          count={events.length}
          rows={events.map((event) => (
            <tr>
              <td class="time">{when(event.time)}</td>
              <td class="wrap">
                <Revealed text={event.action} />
              </td>
              <td>{event.outcome}</td>
              <td class="wrap">
                <Revealed text={event.actor.kind === 'bridge' ? 'bridge key' : (event.actor.id ?? event.actor.kind)} />
              </td>
              <td class="long">{event.agent_id ? <Revealed text={event.agent_id} visible={breakAfterSeparators} /> : '—'}</td>
              <td class="long">{event.target ? <Revealed text={event.target} visible={breakAfterSeparators} /> : '—'}</td>
              <td class="wrap">
                <Revealed text={event.client ?? '—'} />
              </td>
            </tr>
          ))}
        />
        <Pager path={`${base}/audit`} params={{ agent, action }} next={next_cursor} />
      </Layout>,
    );
  });
}
