import type { Child } from 'hono/jsx';
import type { ConsoleApi } from '../api.js';
import { ActionForm, Pager, Table, when } from '../components.js';
import { type ConsoleApp, frameOf, type PageDeps, redirectWith } from '../context.js';
import { DEFAULT_QUARANTINE_THRESHOLD, explainInjection } from '../injection-explanation.js';
import { Layout } from '../layout.js';
import { htmlAsText, revealedText } from '../reveal-text.js';
import { Revealed, RevealedSegments } from '../revealed.js';

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

/** A part of an untrusted message as preformatted plain text (its content: `Revealed` text, nothing rendered or clickable). */
function PlainText(props: { label: string; children: Child }) {
  return (
    <pre class="untrusted" data-part={props.label}>
      {props.children}
    </pre>
  );
}

/** Untrusted text inline (an evidence sentence): hidden parts revealed and marked, never rendered. */
function InlineText(props: { text: string }) {
  return (
    <span class="untrusted-inline">
      <Revealed text={props.text} />
    </span>
  );
}

/** Header lines as plain text, with break opportunities after `,` and `;` so long lists wrap between items, not mid-word. */
function HeaderLines(props: { headers: Record<string, string> }) {
  const breakable = (text: string) => text.split(/(?<=[,;])/).flatMap((piece, index) => (index === 0 ? [piece] : [<wbr />, piece]));
  return (
    <pre class="untrusted" data-part="Headers">
      {Object.entries(props.headers).map(([name, value], line) => (
        <>
          {line > 0 ? '\n' : ''}
          <Revealed text={`${name}: `} />
          <Revealed text={value} visible={breakable} />
        </>
      ))}
    </pre>
  );
}

/** The quarantine threshold in force (the `postbox_quarantine_threshold` setting), or its default when it cannot be read. */
async function quarantineThreshold(api: ConsoleApi): Promise<number> {
  try {
    const { settings } = await api<{ settings: Array<{ key: string; value: unknown }> }>('agent-identity/settings/list');
    const value = settings.find((setting) => setting.key === 'postbox_quarantine_threshold')?.value;
    return typeof value === 'number' && Number.isFinite(value) ? value : DEFAULT_QUARANTINE_THRESHOLD;
  } catch {
    return DEFAULT_QUARANTINE_THRESHOLD;
  }
}

/** Why a message was (or was not) quarantined: score against the threshold, the signals in plain words, the weightiest sentences. */
function WhyQuarantined(props: { score: number; quarantined: boolean; threshold: number; headers: Record<string, string> }) {
  const why = explainInjection(props.headers);
  const reached = props.score >= props.threshold;
  return (
    <section aria-labelledby="why" class="why">
      <h2 id="why">{props.quarantined ? 'Why quarantined' : 'Injection check'}</h2>
      <p class="verdict">
        Injection score <strong>{props.score.toFixed(2)}</strong> {reached ? 'reaches' : 'is below'} the current quarantine threshold{' '}
        <strong>{props.threshold.toFixed(2)}</strong> (setting <code>postbox_quarantine_threshold</code>; the one in force when the mail
        arrived may have differed).
        {props.quarantined && !reached ? ' A rule of the agent quarantined it, or the threshold was lower when it arrived.' : ''}
        {why?.scorer ? ` Scored by ${revealedText(why.scorer)}${why.fallback ? ` after ${revealedText(why.fallback)} failed` : ''}.` : ''}
        {why?.local !== null && why?.local !== undefined ? ` The local model alone gave ${why.local.toFixed(2)}.` : ''}
      </p>
      {why === null ? (
        <p class="hint">The postbox recorded no explanation for this message.</p>
      ) : (
        <>
          <h3>Signals that fired</h3>
          {why.signals.length ? (
            <ul class="signals">
              {why.signals.map((signal) => (
                <li>
                  {signal.known ? (
                    <>
                      {signal.description} <code class="signal-name">{signal.name}</code>
                    </>
                  ) : (
                    <code>
                      <Revealed text={signal.name} />
                    </code>
                  )}
                </li>
              ))}
            </ul>
          ) : (
            <p class="hint">No hand-written signal fired; the score comes from the wording of the sentences.</p>
          )}
          <h3>Sentences that weighed most</h3>
          {why.evidence.length ? (
            <ul class="evidence">
              {why.evidence.map((item) => (
                <li>
                  <span
                    class={`weight ${item.weight >= 0 ? 'up' : 'down'}`}
                  >{`${item.weight >= 0 ? '+' : ''}${item.weight.toFixed(2)}`}</span>
                  <InlineText text={item.text} />
                </li>
              ))}
            </ul>
          ) : (
            <p class="hint">No single sentence added much to the score.</p>
          )}
          <p class="hint">
            Weights are what each sentence added to the model's log-odds; sentences are the sender's text, lower-cased and cut to 80
            characters.
          </p>
        </>
      )}
    </section>
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
            <a href={`${props.base}/postbox/messages/${encodeURIComponent(message.id)}`}>
              <Revealed text={message.subject || '(no subject)'} />
            </a>
          </td>
          <td>{message.agent_id}</td>
          <td>
            <Revealed text={message.direction === 'in' ? message.from : `to ${message.to}`} />
          </td>
          <td>{message.injection_score.toFixed(2)}</td>
          <td>{message.quarantined ? 'quarantined' : message.status}</td>
          <td>{when(message.created_at)}</td>
        </tr>
      ))}
    />
  );
}

/**
 * Postbox: the quarantine queue across agents, recent mail with scores, addresses and webhooks; review, release or
 * delete a message; send a webhook's failed deliveries again.
 */
export function registerPostbox(app: ConsoleApp, { api, base }: PageDeps): void {
  app.get('/postbox', async (c) => {
    const cursor = c.req.query('cursor') || null;
    const mailCursor = c.req.query('mail') || null;
    const addressesCursor = c.req.query('addresses_cursor') || null;
    const webhooksCursor = c.req.query('webhooks_cursor') || null;
    const agent = c.req.query('agent') || undefined;
    const only = agent ? { agent_id: agent } : {};
    // Each table pages on its own cursor parameter; every pager keeps the others' pages.
    const here = { agent, cursor, mail: mailCursor, addresses_cursor: addressesCursor, webhooks_cursor: webhooksCursor };
    const [quarantine, recent, addresses, webhooks] = await Promise.all([
      api('agent-postbox/admin/messages/list', { ...only, quarantined: true, limit: 50, cursor }),
      api('agent-postbox/admin/messages/list', { ...only, quarantined: false, limit: 25, cursor: mailCursor }),
      api('agent-postbox/admin/addresses/list', { ...only, limit: 50, cursor: addressesCursor }),
      api('agent-postbox/admin/webhooks/list', { ...only, limit: 50, cursor: webhooksCursor }),
    ]);
    const frame = frameOf(c, base);
    return c.html(
      <Layout frame={frame} title="Postbox" current="Postbox">
        <form method="get" action={`${base}/postbox`} class="toolbar">
          <label for="postbox-agent">Mailbox of agent</label>
          <input id="postbox-agent" name="agent" value={agent ?? ''} />
          <button type="submit">Show</button>
        </form>
        <section aria-labelledby="quarantine">
          <h2 id="quarantine">Quarantine queue</h2>
          <MessageTable caption="Quarantined messages" messages={quarantine.messages} base={base} empty="Nothing is quarantined." />
          <Pager
            path={`${base}/postbox`}
            params={here}
            next={quarantine.next_cursor}
            label="Next page of quarantined messages"
            fragment="quarantine"
          />
        </section>
        <section aria-labelledby="mail">
          <h2 id="mail">Recent mail</h2>
          <MessageTable caption="Recent mail" messages={recent.messages} base={base} empty="No mail yet." />
          <Pager
            path={`${base}/postbox`}
            params={here}
            name="mail"
            next={recent.next_cursor}
            label="Older mail"
            first="Newest mail"
            fragment="mail"
          />
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
                <td>
                  <Revealed text={address.address} />
                </td>
                <td>
                  <a href={`${base}/postbox?agent=${encodeURIComponent(address.agent_id)}`}>{address.agent_id}</a>
                </td>
                <td>{when(address.created_at)}</td>
              </tr>
            ))}
          />
          <Pager
            path={`${base}/postbox`}
            params={here}
            name="addresses_cursor"
            next={addresses.next_cursor}
            label="Next page of addresses"
            fragment="addresses"
          />
        </section>
        <section aria-labelledby="webhooks">
          <h2 id="webhooks">Webhooks</h2>
          <Table
            caption="Webhooks"
            head={['Agent', 'URL', 'Events', 'Last delivery', 'Actions']}
            empty="No webhooks."
            count={webhooks.webhooks.length}
            rows={webhooks.webhooks.map(
              (hook: {
                webhook_id: string;
                agent_id: string;
                url: string;
                events: string[];
                last_delivery: { at: string; ok: boolean; status: number | null; error: string | null } | null;
              }) => (
                <tr>
                  <td>{hook.agent_id}</td>
                  <td>
                    <Revealed text={hook.url} />
                  </td>
                  <td class="wrap">{hook.events.join(', ')}</td>
                  <td class="error-text">
                    {hook.last_delivery ? (
                      <Revealed
                        text={`${hook.last_delivery.ok ? 'ok' : 'failed'} ${hook.last_delivery.status ?? ''} ${hook.last_delivery.error ?? ''} · ${when(hook.last_delivery.at)}`}
                      />
                    ) : (
                      'never'
                    )}
                  </td>
                  <td>
                    {hook.last_delivery && !hook.last_delivery.ok ? (
                      <ActionForm
                        action={`${base}/postbox/webhooks/${encodeURIComponent(hook.webhook_id)}/redeliver`}
                        csrf={frame.session.csrf}
                        label="Redeliver failed"
                        ariaLabel={`Redeliver the failed deliveries of webhook ${hook.webhook_id}`}
                        confirm={`Send every failed delivery of this webhook of ${hook.agent_id} again?`}
                      />
                    ) : null}
                  </td>
                </tr>
              ),
            )}
          />
          <Pager
            path={`${base}/postbox`}
            params={here}
            name="webhooks_cursor"
            next={webhooks.next_cursor}
            label="Next page of webhooks"
            fragment="webhooks"
          />
        </section>
      </Layout>,
    );
  });

  app.get('/postbox/messages/:id', async (c) => {
    const [message, threshold] = await Promise.all([
      api('agent-postbox/admin/messages/get', { id: c.req.param('id') }),
      quarantineThreshold(api),
    ]);
    const frame = frameOf(c, base);
    const action = `${base}/postbox/messages/${encodeURIComponent(message.id)}`;
    const headers = (message.headers ?? {}) as Record<string, string>;
    return c.html(
      <Layout
        frame={frame}
        title={message.quarantined ? 'Quarantined message' : 'Message'}
        current="Postbox"
        crumbs={[['Postbox', `${base}/postbox`]]}
      >
        <p class="warning">
          Untrusted content, shown as plain text: links are not clickable and text hidden from readers is revealed and marked.
        </p>
        <dl class="fields">
          <dt>Subject</dt>
          <dd>
            <PlainText label="Subject">
              <Revealed text={message.subject} />
            </PlainText>
          </dd>
          <dt>From</dt>
          <dd>
            <Revealed text={message.from} />
          </dd>
          <dt>To</dt>
          <dd>
            <Revealed text={message.to} />
          </dd>
          <dt>Agent</dt>
          <dd>{message.agent_id}</dd>
          <dt>Injection score</dt>
          <dd>{message.injection_score.toFixed(2)}</dd>
          <dt>State</dt>
          <dd>{message.quarantined ? 'quarantined' : message.status}</dd>
          <dt>Received</dt>
          <dd>{when(message.created_at)}</dd>
        </dl>
        <WhyQuarantined score={message.injection_score} quarantined={message.quarantined} threshold={threshold} headers={headers} />
        {message.quarantined ? (
          <div class="actions">
            <ActionForm
              action={`${action}/release`}
              csrf={frame.session.csrf}
              label="Release"
              confirm={`Release this message to ${message.agent_id}? It is delivered as normal mail and its webhooks fire.`}
            />
            <ActionForm
              action={`${action}/delete`}
              csrf={frame.session.csrf}
              label="Delete"
              confirm={`Delete this message to ${message.agent_id} for good? This cannot be undone.`}
              danger
            />
          </div>
        ) : null}
        <h2>Text body</h2>
        <PlainText label="Text body">
          <Revealed text={message.body} />
        </PlainText>
        {message.html ? (
          <>
            <h2>HTML body as text</h2>
            <PlainText label="HTML body as text">
              <RevealedSegments segments={htmlAsText(message.html)} />
            </PlainText>
          </>
        ) : null}
        <h2>Headers</h2>
        <HeaderLines headers={headers} />
      </Layout>,
    );
  });

  app.post('/postbox/messages/:id/release', async (c) => {
    const released = await api('agent-postbox/admin/quarantine/release', { id: c.req.param('id') });
    return redirectWith(c, `${base}/postbox`, { kind: 'ok', text: `Message ${released.id} released to ${released.agent_id}.` });
  });

  app.post('/postbox/webhooks/:id/redeliver', async (c) => {
    const redelivered = await api('agent-postbox/admin/webhooks/redeliver', { webhook_id: c.req.param('id') });
    const text =
      redelivered.requeued === 0
        ? `Webhook ${redelivered.webhook_id} has no failed deliveries to send again.`
        : `${redelivered.requeued} failed ${redelivered.requeued === 1 ? 'delivery' : 'deliveries'} of webhook ${redelivered.webhook_id} queued again.`;
    return redirectWith(c, `${base}/postbox`, { kind: 'ok', text });
  });

  app.post('/postbox/messages/:id/delete', async (c) => {
    const deleted = await api('agent-postbox/admin/quarantine/delete', { id: c.req.param('id') });
    return redirectWith(c, `${base}/postbox`, { kind: 'ok', text: `Message ${deleted.id} deleted.` });
  });
}
