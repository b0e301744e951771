import { ActionForm, Pager, present, Table, when } from '../components.js';
import { backTo, type ConsoleApp, exactField, field, frameOf, type PageDeps, redirectWith } from '../context.js';
import { Layout } from '../layout.js';
import { revealedText } from '../reveal-text.js';
import { Revealed } from '../revealed.js';

/** The API's agent id rule (core `agentIdSchema`): 1–128 of `A-Z a-z 0-9 _ . : @ -`, starting with a letter or digit. */
export const AGENT_ID_PATTERN = '[A-Za-z0-9][A-Za-z0-9_.:@\\-]{0,127}';
/** The rule in words, shown under the field and as its title. */
export const AGENT_ID_RULE = 'Up to 128 letters, digits and _ . : @ -, starting with a letter or digit.';

/** Rows per page of an agent's devices (`devices_cursor`) and of its delegations (`delegations_cursor`), which page independently. */
const DETAIL_PAGE = 50;
/** The query parameters that say which page of each of an agent's tables is shown (kept by the actions). */
const DETAIL_PARAMS = ['devices_cursor', 'delegations_cursor'] as const;

interface AgentRow {
  agent_id: string;
  display_name: string;
  created_at: string;
  active_devices: number;
}

/** Agents: list and search, create; per agent its devices (issue with the key shown once, revoke), delegations, teams and secret names. */
export function registerAgents(app: ConsoleApp, { api, base }: PageDeps): void {
  app.get('/agents', async (c) => {
    const query = c.req.query('q') || undefined;
    const cursor = c.req.query('cursor') || null;
    const { agents, next_cursor } = await api<{ agents: AgentRow[]; next_cursor: string | null }>('agent-identity/admin/agents/list', {
      ...(query ? { query } : {}),
      cursor,
      limit: 50,
    });
    const frame = frameOf(c, base);
    return c.html(
      <Layout frame={frame} title="Agents" current="Agents">
        <form method="get" action={`${base}/agents`} class="toolbar">
          <label for="agent-search">Search agents</label>
          <input id="agent-search" name="q" type="search" value={query ?? ''} />
          <button type="submit">Search</button>
        </form>
        <Table
          caption="Agents"
          head={['Agent', 'Display name', 'Active devices', 'Created']}
          empty="No agents match."
          count={agents.length}
          rows={agents.map((agent) => (
            <tr>
              <td class="long">
                <a href={`${base}/agents/${encodeURIComponent(agent.agent_id)}`}>{agent.agent_id}</a>
              </td>
              <td class="wrap">
                <Revealed text={agent.display_name} />
              </td>
              <td>{agent.active_devices}</td>
              <td class="time">{when(agent.created_at)}</td>
            </tr>
          ))}
        />
        <Pager path={`${base}/agents`} params={{ q: query }} next={next_cursor} />
        <section aria-labelledby="create-agent">
          <h2 id="create-agent">Create an agent</h2>
          <form method="post" action={`${base}/agents/create`} class="card">
            <input type="hidden" name="_csrf" value={frame.session.csrf} />
            <label for="new-agent-id">Agent id</label>
            <input
              id="new-agent-id"
              name="agent_id"
              required
              maxlength={128}
              pattern={AGENT_ID_PATTERN}
              title={AGENT_ID_RULE}
              aria-describedby="new-agent-id-rule"
            />
            <p class="hint" id="new-agent-id-rule">
              {AGENT_ID_RULE}
            </p>
            <label for="new-agent-name">Display name</label>
            <input id="new-agent-name" name="display_name" required />
            <button type="submit">Create agent</button>
          </form>
        </section>
      </Layout>,
    );
  });

  app.post('/agents/create', async (c) => {
    const form = await c.req.parseBody();
    const agentId = field(form, 'agent_id') ?? '';
    await api('agent-identity/agents/create', { agent_id: agentId, display_name: field(form, 'display_name') ?? agentId });
    return redirectWith(c, `${base}/agents/${encodeURIComponent(agentId)}`, { kind: 'ok', text: `Agent ${agentId} created.` });
  });

  app.get('/agents/:id', async (c) => {
    const agentId = c.req.param('id');
    const devicesCursor = c.req.query('devices_cursor') || null;
    const delegationsCursor = c.req.query('delegations_cursor') || null;
    const [agent, devices, delegations, secrets] = await Promise.all([
      api('agent-identity/admin/agents/get', { agent_id: agentId }),
      api('agent-identity/admin/devices/list', { agent_id: agentId, limit: DETAIL_PAGE, cursor: devicesCursor }),
      api('agent-identity/admin/delegations/list', { agent_id: agentId, limit: DETAIL_PAGE, cursor: delegationsCursor }),
      api<{ secrets: Array<{ key: string; updated_at: string }> }>('agent-identity/secrets/list', { agent_id: agentId }).catch(() => ({
        secrets: [],
      })),
    ]);
    const frame = frameOf(c, base);
    const { csrf } = frame.session;
    const self = `${base}/agents/${encodeURIComponent(agentId)}`;
    const here = { devices_cursor: devicesCursor, delegations_cursor: delegationsCursor };
    const keep = present(here);
    return c.html(
      <Layout frame={frame} title={`Agent ${agent.agent_id}`} current="Agents">
        <p>
          <Revealed text={agent.display_name} /> · created {when(agent.created_at)} · teams:{' '}
          {agent.teams.length ? agent.teams.join(', ') : 'none'}
        </p>
        <section aria-labelledby="devices">
          <h2 id="devices">Devices</h2>
          <form method="post" action={`${self}/devices/issue`} class="card">
            <input type="hidden" name="_csrf" value={csrf} />
            <label for="device-label">Device label</label>
            <input id="device-label" name="label" required />
            <label for="device-ttl">Valid for days</label>
            <input id="device-ttl" name="ttl_days" type="number" min="1" max="3650" value="90" />
            <button type="submit">Issue device</button>
          </form>
          <Table
            caption="Devices"
            head={['Device', 'Label', 'State', 'Expires', '']}
            empty="No devices."
            count={devices.devices.length}
            rows={devices.devices.map((device: { device_id: string; label: string; state: string; expires_at: string }) => (
              <tr>
                <td>
                  <code>{device.device_id}</code>
                </td>
                <td>
                  <Revealed text={device.label} />
                </td>
                <td>{device.state}</td>
                <td>{when(device.expires_at)}</td>
                <td>
                  {device.state === 'active' ? (
                    <ActionForm
                      action={`${self}/devices/revoke`}
                      csrf={csrf}
                      label="Revoke"
                      ariaLabel={`Revoke device ${revealedText(device.label)}`}
                      fields={{ ...keep, device_id: device.device_id }}
                      confirm={`Revoke device ${revealedText(device.label)}? Its key stops working at once.`}
                      danger
                    />
                  ) : null}
                </td>
              </tr>
            ))}
          />
          <Pager
            path={self}
            params={here}
            name="devices_cursor"
            next={devices.next_cursor}
            label="Next page of devices"
            fragment="devices"
          />
        </section>
        <section aria-labelledby="delegations">
          <h2 id="delegations">Delegations</h2>
          <Table
            caption="Delegations"
            head={['From', 'To', 'Scope', 'State', 'Expires', '']}
            empty="No delegations."
            count={delegations.delegations.length}
            rows={delegations.delegations.map(
              (delegation: {
                delegation_id: string;
                from_agent: string;
                to_agent: string;
                scope: string[];
                state: string;
                expires_at: string;
              }) => (
                <tr>
                  <td>{delegation.from_agent}</td>
                  <td>{delegation.to_agent}</td>
                  <td>{delegation.scope.join(', ')}</td>
                  <td>{delegation.state}</td>
                  <td>{when(delegation.expires_at)}</td>
                  <td>
                    {delegation.state === 'active' ? (
                      <ActionForm
                        action={`${self}/delegations/revoke`}
                        csrf={csrf}
                        label="Revoke"
                        ariaLabel={`Revoke delegation ${delegation.delegation_id}`}
                        fields={{ ...keep, delegation_id: delegation.delegation_id }}
                        confirm="Revoke this delegation?"
                        danger
                      />
                    ) : null}
                  </td>
                </tr>
              ),
            )}
          />
          <Pager
            path={self}
            params={here}
            name="delegations_cursor"
            next={delegations.next_cursor}
            label="Next page of delegations"
            fragment="delegations"
          />
        </section>
        <section aria-labelledby="secrets">
          <h2 id="secrets">Secret names</h2>
          {secrets.secrets.length ? (
            <ul>
              {secrets.secrets.map((secret) => (
                <li>
                  <code>{secret.key}</code> · updated {when(secret.updated_at)}
                </li>
              ))}
            </ul>
          ) : (
            <p class="empty">No secrets.</p>
          )}
        </section>
      </Layout>,
    );
  });

  app.post('/agents/:id/devices/issue', async (c) => {
    const agentId = c.req.param('id');
    const form = await c.req.parseBody();
    const ttl = Number(field(form, 'ttl_days'));
    const issued = await api('agent-identity/device/issue', {
      agent_id: agentId,
      label: field(form, 'label') ?? 'console',
      ...(Number.isInteger(ttl) && ttl > 0 ? { ttl_days: ttl } : {}),
    });
    return redirectWith(c, `${base}/agents/${encodeURIComponent(agentId)}`, {
      kind: 'secret',
      text: `Device ${issued.device_id} issued, valid until ${when(issued.expires_at)}. Copy the key now: it is shown this once.`,
      secret: issued.device_key,
    });
  });

  app.post('/agents/:id/devices/revoke', async (c) => {
    const form = await c.req.parseBody();
    const revoked = await api('agent-identity/device/revoke', { device_id: exactField(form, 'device_id') ?? '' });
    return redirectWith(c, backTo(`${base}/agents/${encodeURIComponent(c.req.param('id'))}`, form, DETAIL_PARAMS), {
      kind: 'ok',
      text: `Device ${revoked.device_id} revoked.`,
    });
  });

  app.post('/agents/:id/delegations/revoke', async (c) => {
    const form = await c.req.parseBody();
    const revoked = await api('agent-identity/delegate/revoke', { delegation_id: exactField(form, 'delegation_id') ?? '' });
    return redirectWith(c, backTo(`${base}/agents/${encodeURIComponent(c.req.param('id'))}`, form, DETAIL_PARAMS), {
      kind: 'ok',
      text: `Delegation ${revoked.delegation_id} revoked.`,
    });
  });
}
