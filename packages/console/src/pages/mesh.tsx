import { AclGraph } from '../acl-graph.js';
import { ActionForm, Pager, Table, when } from '../components.js';
import { type ConsoleApp, field, frameOf, type PageDeps, redirectWith } from '../context.js';
import { Layout } from '../layout.js';
import { type AclEdge, peerPairs } from '../mesh-acls.js';

interface PeerRow {
  agent_id: string;
  address: string;
  endpoint: string;
  online: boolean;
  last_seen: string;
}

/** Mesh: peers online or offline with last seen, the ACLs as an SVG graph and as a table of peer pairs, each with its PSK rotation. */
export function registerMesh(app: ConsoleApp, { api, base }: PageDeps): void {
  app.get('/mesh', async (c) => {
    const cursor = c.req.query('cursor') || null;
    const [peers, acls] = await Promise.all([
      api<{ peers: PeerRow[]; next_cursor: string | null }>('agent-mesh/admin/peers/list', { limit: 100, cursor }),
      api<{ acls: Array<AclEdge & { psk_rotated_at: string | null }>; next_cursor: string | null }>('agent-mesh/admin/acls/list', {
        limit: 500,
      }),
    ]);
    const frame = frameOf(c, base);
    const online = new Set(peers.peers.filter((peer) => peer.online).map((peer) => peer.agent_id));
    const pairs = peerPairs(acls.acls);
    return c.html(
      <Layout frame={frame} title="Mesh" current="Mesh">
        <section aria-labelledby="peers">
          <h2 id="peers">Peers</h2>
          <Table
            caption="Peers"
            head={['Agent', 'State', 'Address', 'Endpoint', 'Last seen']}
            empty="No peers registered."
            count={peers.peers.length}
            rows={peers.peers.map((peer) => (
              <tr>
                <td>{peer.agent_id}</td>
                <td>
                  <span class={`badge ${peer.online ? 'ok' : 'bad'}`}>{peer.online ? 'online' : 'offline'}</span>
                </td>
                <td>{peer.address}</td>
                <td>{peer.endpoint}</td>
                <td>{when(peer.last_seen)}</td>
              </tr>
            ))}
          />
          <Pager path={`${base}/mesh`} params={{}} next={peers.next_cursor} />
        </section>
        <section aria-labelledby="acls">
          <h2 id="acls">ACLs</h2>
          <AclGraph agents={peers.peers.map((peer) => peer.agent_id)} online={online} acls={acls.acls} />
          <Table
            caption="ACLs"
            head={['Pair', 'Allowed', 'PSK rotated', '']}
            empty="No ACLs."
            count={pairs.length}
            rows={pairs.map((pair) => (
              <tr>
                <td class="wrap">
                  {pair.a} ↔ {pair.b}
                </td>
                <td class="wrap">
                  <ul class="flows">
                    {pair.directions.map((direction) => (
                      <li>
                        {direction.from} → {direction.to}: {direction.ports.join(', ')}
                      </li>
                    ))}
                  </ul>
                </td>
                <td class="time">{when(pair.acls[0]?.psk_rotated_at)}</td>
                <td>
                  <ActionForm
                    action={`${base}/mesh/psk/rotate`}
                    csrf={frame.session.csrf}
                    label="Rotate PSK"
                    ariaLabel={`Rotate PSK of ${pair.a} and ${pair.b}`}
                    fields={{ a: pair.a, b: pair.b }}
                    confirm={`Rotate the pre-shared key of ${pair.a} and ${pair.b}? Both must re-fetch their WireGuard config.`}
                  />
                </td>
              </tr>
            ))}
          />
        </section>
      </Layout>,
    );
  });

  app.post('/mesh/psk/rotate', async (c) => {
    const form = await c.req.parseBody();
    const rotated = await api('agent-mesh/psk/rotate', { a: field(form, 'a') ?? '', b: field(form, 'b') ?? '' });
    return redirectWith(c, `${base}/mesh`, { kind: 'ok', text: `PSK of ${rotated.a} and ${rotated.b} rotated.` });
  });
}
