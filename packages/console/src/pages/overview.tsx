import { Stats, Table, when } from '../components.js';
import { type ConsoleApp, frameOf, type PageDeps } from '../context.js';
import { Layout } from '../layout.js';

/** Expiring certificates listed on the Overview; past that it links to all of them on the Gateway page. */
const EXPIRING_SHOWN = 20;

/** Overview: service-wide counts from every module's summary route, readiness, expiring certificates and the job backlog. */
export function registerOverview(app: ConsoleApp, { api, kernel, base }: PageDeps): void {
  app.get('/', async (c) => {
    const [identity, memory, artifacts, mesh, gateway, postbox, scheduler, ready, expiring] = await Promise.all([
      api('agent-identity/admin/summary'),
      api('agent-memory/admin/summary'),
      api('agent-artifacts/admin/summary'),
      api('agent-mesh/admin/summary'),
      api('agent-gateway/admin/summary'),
      api('agent-postbox/admin/summary'),
      api('agent-scheduler/admin/summary'),
      kernel.ready(),
      api<{
        hosts: Array<{ host: string; agent_id: string; cert_expires_at: string | null; days_remaining: number | null }>;
        next_cursor: string | null;
      }>('agent-gateway/admin/hosts/list', { expiring_within_days: 14, limit: EXPIRING_SHOWN }),
    ]);
    return c.html(
      <Layout frame={frameOf(c, base)} title="Overview" current="Overview">
        <section aria-labelledby="counts">
          <h2 id="counts">Service</h2>
          <Stats
            items={[
              ['Agents', identity.agents],
              ['Active devices', identity.active_devices],
              ['Memories', memory.memories],
              ['Artifacts', artifacts.artifacts],
              ['Peers online', `${mesh.online} of ${mesh.peers}`],
              ['Mail today', `${postbox.mail_today.in} in · ${postbox.mail_today.out} out`],
              ['Quarantined', postbox.quarantined],
              ['Jobs failing', scheduler.failing],
              ['Job backlog', scheduler.runs_pending],
              [`Certificates expiring within ${gateway.expiring_soon_days} days`, gateway.expiring_soon],
            ]}
          />
        </section>
        <section aria-labelledby="expiring">
          <h2 id="expiring">Certificates expiring within 14 days</h2>
          <Table
            caption="Expiring certificates"
            head={['Host', 'Agent', 'Expires', 'Days left']}
            empty="None."
            count={expiring.hosts.length}
            rows={expiring.hosts.map((host) => (
              <tr>
                <td>
                  <a href={`${base}/gateway`}>{host.host}</a>
                </td>
                <td>{host.agent_id}</td>
                <td>{when(host.cert_expires_at)}</td>
                <td>{host.days_remaining ?? '—'}</td>
              </tr>
            ))}
          />
          {expiring.next_cursor ? (
            <p class="pager">
              These are the first {EXPIRING_SHOWN}. <a href={`${base}/gateway?expiring=14`}>All certificates expiring within 14 days</a>
            </p>
          ) : null}
        </section>
        <section aria-labelledby="readiness">
          <h2 id="readiness">Readiness</h2>
          <p class={!ready.ok ? 'badge bad' : ready.degraded ? 'badge warn' : 'badge ok'}>
            {!ready.ok ? 'Not ready' : ready.degraded ? 'Degraded' : 'Ready'}
          </p>
          <ul class="checks">
            {Object.entries(ready.checks).map(([name, state]) => (
              <li>
                <strong>{name}</strong>: {state}
              </li>
            ))}
          </ul>
        </section>
      </Layout>,
    );
  });
}
