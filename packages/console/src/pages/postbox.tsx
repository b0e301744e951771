import { ActionForm, Pager, Table, when } from '../components.js';
import { type ConsoleApp, frameOf, type PageDeps, redirectWith } from '../context.js';
import { Layout } from '../layout.js';
import { htmlAsText, revealInvisible, type TextSegment } from '../reveal-text.js';

interface MessageRow {
  id: string;
  agent_id: string;
  direction: 'in' | 'out';
  from: string;
  to: string;
  subject: string;
  injection_score: number;
  quarantined: boolean;
  status: string;
  created_at: string;
}

/** Untrusted text as plain text: hidden parts revealed and marked, nothing rendered or clickable. */
function PlainText(props: { segments: TextSegment[]; label: string }) {
  return (
    <pre class="untrusted" data-part={props.label}>
      {props.segments.map((segment) =>
        segment.hidden ? (
          <mark class="hidden-text" title="Hidden from human readers in the original">
            <span class="tag">hidden:</span>
            {segment.text}
          </mark>
        ) : (
          segment.text
        ),
      )}
    </pre>
  );
}

function MessageTable(props: { caption: string; messages: MessageRow[]; base: string; empty: string }) {
  return (
    <Table
      caption={props.caption}
      head={['Subject', 'Agent', 'From', 'Score', 'State', 'Received']}
      empty={props.empty}
      count={props.messages.length}
      rows={props.messages.map((message) => (
        <tr>
          <td>
            <a href={`${props.base}/postbox/messages/${encodeURIComponent(message.id)}`}>{message.subject || '(no subject)'}</a>
          </td>
          <td>{message.agent_id}</td>
          <td>{message.direction === 'in' ? message.from : `to ${message.to}`}</td>
          <td>{message.injection_score.toFixed(2)}</td>
          <td>{message.quarantined ? 'quarantined' : message.status}</td>
          <td>{when(message.created_at)}</td>
        </tr>
      ))}
    />
  );
}

/** Postbox: the quarantine queue across agents, recent mail with scores, addresses and webhooks; review, release or delete a message. */
export function registerPostbox(app: ConsoleApp, { api, base }: PageDeps): void {
  app.get('/postbox', async (c) => {
    const cursor = c.req.query('cursor') || null;
    const mailCursor = c.req.query('mail') || null;
    const agent = c.req.query('agent') || undefined;
    const only = agent ? { agent_id: agent } : {};
    const [quarantine, recent, addresses, webhooks] = await Promise.all([
      api('agent-postbox/admin/messages/list', { ...only, quarantined: true, limit: 50, cursor }),
      api('agent-postbox/admin/messages/list', { ...only, quarantined: false, limit: 25, cursor: mailCursor }),
      api('agent-postbox/admin/addresses/list', { ...only, limit: 50 }),
      api('agent-postbox/admin/webhooks/list', { ...only, limit: 50 }),
    ]);
    return c.html(
      <Layout frame={frameOf(c, base)} title="Postbox" current="Postbox">
        <form method="get" action={`${base}/postbox`} class="toolbar">
          <label for="postbox-agent">Mailbox of agent</label>
          <input id="postbox-agent" name="agent" value={agent ?? ''} />
          <button type="submit">Show</button>
        </form>
        <section aria-labelledby="quarantine">
          <h2 id="quarantine">Quarantine queue</h2>
          <MessageTable caption="Quarantined messages" messages={quarantine.messages} base={base} empty="Nothing is quarantined." />
          <Pager path={`${base}/postbox`} params={{ agent }} next={quarantine.next_cursor} />
        </section>
        <section aria-labelledby="mail">
          <h2 id="mail">Recent mail</h2>
          <MessageTable caption="Recent mail" messages={recent.messages} base={base} empty="No mail yet." />
          {recent.next_cursor ? (
            <p class="pager">
              <a href={`${base}/postbox?${new URLSearchParams({ ...(agent ? { agent } : {}), mail: recent.next_cursor }).toString()}`}>
                Older mail
              </a>
            </p>
          ) : null}
        </section>
        <section aria-labelledby="addresses">
          <h2 id="addresses">Addresses</h2>
          <Table
            caption="Addresses"
            head={['Address', 'Agent', 'Created']}
            empty="No addresses."
            count={addresses.addresses.length}
            rows={addresses.addresses.map((address: { address: string; agent_id: string; created_at: string }) => (
              <tr>
                <td>{address.address}</td>
                <td>
                  <a href={`${base}/postbox?agent=${encodeURIComponent(address.agent_id)}`}>{address.agent_id}</a>
                </td>
                <td>{when(address.created_at)}</td>
              </tr>
            ))}
          />
        </section>
        <section aria-labelledby="webhooks">
          <h2 id="webhooks">Webhooks</h2>
          <Table
            caption="Webhooks"
            head={['Agent', 'URL', 'Events', 'Last delivery']}
            empty="No webhooks."
            count={webhooks.webhooks.length}
            rows={webhooks.webhooks.map(
              (hook: {
                agent_id: string;
                url: string;
                events: string[];
                last_delivery: { at: string; ok: boolean; status: number | null; error: string | null } | null;
              }) => (
                <tr>
                  <td>{hook.agent_id}</td>
                  <td>{hook.url}</td>
                  <td>{hook.events.join(', ')}</td>
                  <td>
                    {hook.last_delivery
                      ? `${hook.last_delivery.ok ? 'ok' : 'failed'} ${hook.last_delivery.status ?? ''} ${hook.last_delivery.error ?? ''} · ${when(hook.last_delivery.at)}`
                      : 'never'}
                  </td>
                </tr>
              ),
            )}
          />
        </section>
      </Layout>,
    );
  });

  app.get('/postbox/messages/:id', async (c) => {
    const message = await api('agent-postbox/admin/messages/get', { id: c.req.param('id') });
    const frame = frameOf(c, base);
    const action = `${base}/postbox/messages/${encodeURIComponent(message.id)}`;
    return c.html(
      <Layout frame={frame} title="Message" current="Postbox">
        <p class="warning">
          Untrusted content, shown as plain text: links are not clickable and text hidden from readers is revealed and marked.
        </p>
        <dl class="fields">
          <dt>Subject</dt>
          <dd>
            <PlainText segments={revealInvisible(message.subject)} label="Subject" />
          </dd>
          <dt>From</dt>
          <dd>{message.from}</dd>
          <dt>To</dt>
          <dd>{message.to}</dd>
          <dt>Agent</dt>
          <dd>{message.agent_id}</dd>
          <dt>Injection score</dt>
          <dd>{message.injection_score.toFixed(2)}</dd>
          <dt>State</dt>
          <dd>{message.quarantined ? 'quarantined' : message.status}</dd>
          <dt>Received</dt>
          <dd>{when(message.created_at)}</dd>
        </dl>
        {message.quarantined ? (
          <div class="actions">
            <ActionForm
              action={`${action}/release`}
              csrf={frame.session.csrf}
              label="Release"
              confirm="Release this message to the agent?"
            />
            <ActionForm
              action={`${action}/delete`}
              csrf={frame.session.csrf}
              label="Delete"
              confirm="Delete this message for good?"
              danger
            />
          </div>
        ) : null}
        <h2>Text body</h2>
        <PlainText segments={revealInvisible(message.body)} label="Text body" />
        {message.html ? (
          <>
            <h2>HTML body as text</h2>
            <PlainText segments={htmlAsText(message.html)} label="HTML body as text" />
          </>
        ) : null}
        <h2>Headers</h2>
        <PlainText
          segments={revealInvisible(
            Object.entries(message.headers as Record<string, string>)
              .map(([name, value]) => `${name}: ${value}`)
              .join('\n'),
          )}
          label="Headers"
        />
      </Layout>,
    );
  });

  app.post('/postbox/messages/:id/release', async (c) => {
    const released = await api('agent-postbox/admin/quarantine/release', { id: c.req.param('id') });
    return redirectWith(c, `${base}/postbox`, { kind: 'ok', text: `Message ${released.id} released to ${released.agent_id}.` });
  });

  app.post('/postbox/messages/:id/delete', async (c) => {
    const deleted = await api('agent-postbox/admin/quarantine/delete', { id: c.req.param('id') });
    return redirectWith(c, `${base}/postbox`, { kind: 'ok', text: `Message ${deleted.id} deleted.` });
  });
}
