import { AclGraph } from '../acl-graph.js';
import { ActionForm, Pager, present, Table, when } from '../components.js';
import { backTo, type ConsoleApp, exactField, frameOf, type PageDeps, redirectWith } from '../context.js';
import { Layout } from '../layout.js';
import { type AclEdge, aclDirections, peerPairs } from '../mesh-acls.js';

interface PeerRow {
  agent_id: string;
  address: string;
  endpoint: string;
  online: boolean;
  last_seen: string;
}

/** Peers per page of the Peers table (`cursor`). */
const PEER_PAGE = 100;
/** ACLs per page of the ACLs table (`acls_cursor`); at most this many pairs, so the page stays well inside the 250 KB budget. */
const ACL_PAGE = 100;
/** The graph is drawn only when the whole mesh is on the page and has at most this many agents ... */
export const GRAPH_MAX_AGENTS = 24;
/** ... and at most this many allowed directions (beyond that an SVG on a circle is neither readable nor small). */
export const GRAPH_MAX_DIRECTIONS = 60;
/** Refusals per page of the Refusals table (`refusals_cursor`). */
const REFUSAL_PAGE = 100;
/** The query parameters that say which page of each table is shown. */
const PAGE_PARAMS = ['cursor', 'acls_cursor', 'refusals_cursor'] as const;

/**
 * Mesh: peers online or offline with last seen, the ACLs as an SVG graph and
 * as a table of peer pairs, each with its PSK rotation, and the refusals
 * (agents keeping another's peer out), each of which the operator can lift.
 */
export function registerMesh(app: ConsoleApp, { api, base }: PageDeps): void {
  app.get('/mesh', async (c) => {
    const cursor = c.req.query('cursor') || null;
    const aclsCursor = c.req.query('acls_cursor') || null;
    const refusalsCursor = c.req.query('refusals_cursor') || null;
    const [peers, acls, refusals, summary] = await Promise.all([
      api<{ peers: PeerRow[]; next_cursor: string | null }>('agent-mesh/admin/peers/list', { limit: PEER_PAGE, cursor }),
      api<{ acls: Array<AclEdge & { psk_rotated_at: string | null }>; next_cursor: string | null }>('agent-mesh/admin/acls/list', {
        limit: ACL_PAGE,
        cursor: aclsCursor,
      }),
      api<{ refusals: Array<{ refuser: string; refused: string; created_at: string }>; next_cursor: string | null }>(
        'agent-mesh/admin/refusals/list',
        { limit: REFUSAL_PAGE, cursor: refusalsCursor },
      ),
      api<{ peers: number; online: number; acls: number }>('agent-mesh/admin/summary'),
    ]);
    const frame = frameOf(c, base);
    const here = { cursor, acls_cursor: aclsCursor, refusals_cursor: refusalsCursor };
    const online = new Set(peers.peers.filter((peer) => peer.online).map((peer) => peer.agent_id));
    const pairs = peerPairs(acls.acls);
    const whole = !cursor && !aclsCursor && !peers.next_cursor && !acls.next_cursor;
    const agents = new Set([...peers.peers.map((peer) => peer.agent_id), ...acls.acls.flatMap((acl) => [acl.from_agent, acl.to_agent])]);
    const drawGraph = whole && agents.size <= GRAPH_MAX_AGENTS && aclDirections(acls.acls).length <= GRAPH_MAX_DIRECTIONS;
    return c.html(
      <Layout frame={frame} title="Mesh" current="Mesh">
        <section aria-labelledby="peers">
          <h2 id="peers">Peers</h2>
          {cursor || peers.next_cursor ? (
            <p class="hint">
              {summary.peers} peers ({summary.online} online) in agent id order, {PEER_PAGE} to a page.
            </p>
          ) : null}
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
          <Pager path={`${base}/mesh`} params={here} next={peers.next_cursor} label="Next page of peers" fragment="peers" />
        </section>
        <section aria-labelledby="acls">
          <h2 id="acls">ACLs</h2>
          {drawGraph ? (
            <AclGraph agents={peers.peers.map((peer) => peer.agent_id)} online={online} acls={acls.acls} />
          ) : (
            <p class="hint" id="acl-graph-omitted">
              The graph is drawn for a mesh of up to {GRAPH_MAX_AGENTS} agents and {GRAPH_MAX_DIRECTIONS} allowed directions; this one has{' '}
              {summary.peers} peers and {summary.acls} ACLs, so it is not drawn. The tables list all of them.
            </p>
          )}
          {aclsCursor || acls.next_cursor ? (
            <p class="hint">
              {summary.acls} ACLs in (from, to) order, {ACL_PAGE} to a page; a pair whose two directions fall on different pages is listed
              on each, with the directions on that page.
            </p>
          ) : null}
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
                    fields={{ ...present(here), a: pair.a, b: pair.b }}
                    confirm={`Rotate the pre-shared key of ${pair.a} and ${pair.b}? Both must re-fetch their WireGuard config.`}
                  />
                </td>
              </tr>
            ))}
          />
          <Pager path={`${base}/mesh`} params={here} name="acls_cursor" next={acls.next_cursor} label="Next page of ACLs" fragment="acls" />
        </section>
        <section aria-labelledby="refusals">
          <h2 id="refusals">Refusals</h2>
          <p class="hint">
            An agent that removed an ACL of another keeps that agent's peer out: the other cannot grant it access again until the refusal is
            lifted, by the refusing agent or here.
          </p>
          <Table
            caption="Refusals"
            head={['Agent', 'Refuses', 'Since', '']}
            empty="No refusals."
            count={refusals.refusals.length}
            rows={refusals.refusals.map((refusal) => (
              <tr>
                <td>{refusal.refuser}</td>
                <td>{refusal.refused}</td>
                <td class="time">{when(refusal.created_at)}</td>
                <td>
                  <ActionForm
                    action={`${base}/mesh/acl/accept`}
                    csrf={frame.session.csrf}
                    label="Lift"
                    ariaLabel={`Lift the refusal of ${refusal.refused} by ${refusal.refuser}`}
                    fields={{ ...present(here), from_agent: refusal.refuser, to_agent: refusal.refused }}
                    confirm={`Let ${refusal.refused} grant ${refusal.refuser} access again? ${refusal.refuser} removed its ACL on purpose.`}
                  />
                </td>
              </tr>
            ))}
          />
          <Pager
            path={`${base}/mesh`}
            params={here}
            name="refusals_cursor"
            next={refusals.next_cursor}
            label="Next page of refusals"
            fragment="refusals"
          />
        </section>
      </Layout>,
    );
  });

  app.post('/mesh/acl/accept', async (c) => {
    const form = await c.req.parseBody();
    const accepted = await api('agent-mesh/acl/accept', {
      from_agent: exactField(form, 'from_agent') ?? '',
      to_agent: exactField(form, 'to_agent') ?? '',
    });
    return redirectWith(c, backTo(`${base}/mesh`, form, PAGE_PARAMS), {
      kind: 'ok',
      text: accepted.lifted
        ? `${accepted.to_agent} may grant ${accepted.from_agent} access again.`
        : `${accepted.from_agent} did not refuse ${accepted.to_agent}.`,
    });
  });

  app.post('/mesh/psk/rotate', async (c) => {
    const form = await c.req.parseBody();
    const rotated = await api('agent-mesh/psk/rotate', { a: exactField(form, 'a') ?? '', b: exactField(form, 'b') ?? '' });
    return redirectWith(c, backTo(`${base}/mesh`, form, PAGE_PARAMS), {
      kind: 'ok',
      text: `PSK of ${rotated.a} and ${rotated.b} rotated.`,
    });
  });
}
