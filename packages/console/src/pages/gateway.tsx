import { ActionForm, Pager, Table, when } from '../components.js';
import { type ConsoleApp, exactField, frameOf, type PageDeps, redirectWith } from '../context.js';
import { Layout } from '../layout.js';

interface HostRow {
  host: string;
  agent_id: string;
  ips: string[];
  cert_status: string;
  cert_expires_at: string | null;
  days_remaining: number | null;
}

/** The urgency class of a certificate's remaining days: under 7 bad, under 14 warn. */
function urgency(days: number | null): string {
  if (days === null) return '';
  if (days < 7) return 'bad';
  if (days < 14) return 'warn';
  return 'ok';
}

/** Gateway: bound hosts with IPs, certificate state and expiry, days remaining coloured by urgency; renew a certificate now. */
export function registerGateway(app: ConsoleApp, { api, base }: PageDeps): void {
  app.get('/gateway', async (c) => {
    const cursor = c.req.query('cursor') || null;
    // `?expiring=14`: only the hosts whose certificate expires within 14 days (the Overview links here for all of them).
    const days = Number(c.req.query('expiring'));
    const expiring = c.req.query('expiring') && Number.isInteger(days) && days >= 0 && days <= 3650 ? days : undefined;
    const { hosts, next_cursor } = await api<{ hosts: HostRow[]; next_cursor: string | null }>('agent-gateway/admin/hosts/list', {
      ...(expiring === undefined ? {} : { expiring_within_days: expiring }),
      limit: 50,
      cursor,
    });
    const frame = frameOf(c, base);
    return c.html(
      <Layout frame={frame} title="Gateway" current="Gateway">
        {expiring === undefined ? null : (
          <p class="hint">
            Hosts whose certificate expires within {expiring} days. <a href={`${base}/gateway`}>Show all hosts</a>
          </p>
        )}
        <Table
          caption="Hosts"
          head={['Host', 'Agent', 'IPs', 'Certificate', 'Expires', 'Days left', '']}
          empty="No hosts bound."
          count={hosts.length}
          rows={hosts.map((host) => (
            <tr>
              <td>{host.host}</td>
              <td>{host.agent_id}</td>
              <td>{host.ips.join(', ') || '—'}</td>
              <td>{host.cert_status}</td>
              <td>{when(host.cert_expires_at)}</td>
              <td>
                <span class={`badge ${urgency(host.days_remaining)}`}>{host.days_remaining ?? '—'}</span>
              </td>
              <td>
                <ActionForm
                  action={`${base}/gateway/renew`}
                  csrf={frame.session.csrf}
                  label="Renew now"
                  ariaLabel={`Renew now ${host.host}`}
                  fields={{ host: host.host }}
                />
              </td>
            </tr>
          ))}
        />
        <Pager path={`${base}/gateway`} params={{ expiring: expiring === undefined ? undefined : String(expiring) }} next={next_cursor} />
      </Layout>,
    );
  });

  app.post('/gateway/renew', async (c) => {
    const form = await c.req.parseBody();
    const host = exactField(form, 'host') ?? '';
    const { orders } = await api<{ orders: unknown[] }>('agent-gateway/cert/renew', { host });
    return redirectWith(c, `${base}/gateway`, { kind: 'ok', text: `Renewal of ${host} ordered (${orders.length} order).` });
  });
}
