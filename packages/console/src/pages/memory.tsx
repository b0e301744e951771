import { ActionForm, Pager, Table, when } from '../components.js';
import { type ConsoleApp, exactField, frameOf, type PageDeps, redirectWith } from '../context.js';
import { Layout } from '../layout.js';
import { revealedText } from '../reveal-text.js';
import { Revealed } from '../revealed.js';

const KINDS = ['episode', 'semantic', 'kv'] as const;

interface MemoryRow {
  id: string;
  agent_id: string;
  kind: string;
  text: string;
  text_truncated: boolean;
  provenance: string;
  created_at: string;
}

interface Hit {
  id: string;
  text: string;
  provenance: string;
  score: number;
}

/** Semantic search and forget-by-provenance for one agent. */
function AgentTools(props: {
  base: string;
  agent: string;
  csrf: string;
  q: string | undefined;
  hits: Hit[] | null;
  provenances: Array<{ provenance: string; memories: number }>;
  /** The next page of provenances (`provenances_cursor`), kept with the page's other parameters. */
  pager: { params: Record<string, string | null | undefined>; next: string | null };
}) {
  const { base, agent, csrf } = props;
  return (
    <>
      <section aria-labelledby="memory-search">
        <h2 id="memory-search">Search {agent}'s memories by meaning</h2>
        <form method="get" action={`${base}/memory`} class="toolbar">
          <input type="hidden" name="agent" value={agent} />
          <label for="memory-q">Query</label>
          <input id="memory-q" name="q" value={props.q ?? ''} required />
          <button type="submit">Search</button>
        </form>
        {props.hits ? (
          <Table
            caption="Search hits"
            head={['Score', 'Text', 'Provenance']}
            empty="No hits."
            count={props.hits.length}
            rows={props.hits.map((hit) => (
              <tr>
                <td>{hit.score.toFixed(3)}</td>
                <td class="text">
                  <Revealed text={hit.text} />
                </td>
                <td class="long">
                  <Revealed text={hit.provenance} />
                </td>
              </tr>
            ))}
          />
        ) : null}
      </section>
      <section aria-labelledby="memory-provenances">
        <h2 id="memory-provenances">Provenances of {agent}</h2>
        <Table
          caption="Provenances"
          head={['Provenance', 'Memories', '']}
          empty="No memories."
          count={props.provenances.length}
          rows={props.provenances.map((entry) => (
            <tr>
              <td class="long">
                <Revealed text={entry.provenance} />
              </td>
              <td>{entry.memories}</td>
              <td>
                <ActionForm
                  action={`${base}/memory/forget`}
                  csrf={csrf}
                  label="Forget"
                  ariaLabel={`Forget ${entry.memories} memories from ${revealedText(entry.provenance)}`}
                  fields={{ agent_id: agent, provenance: entry.provenance }}
                  confirm={`Forget all ${entry.memories} memories of ${agent} from ${revealedText(entry.provenance)}? This cannot be undone.`}
                  danger
                />
              </td>
            </tr>
          ))}
        />
        <Pager
          path={`${base}/memory`}
          params={props.pager.params}
          name="provenances_cursor"
          next={props.pager.next}
          label="Next page of provenances"
          fragment="memory-provenances"
        />
      </section>
    </>
  );
}

/** Memory: memories newest first, filtered by agent, kind and provenance; per agent, semantic search with scores and forget by provenance. */
export function registerMemory(app: ConsoleApp, { api, base }: PageDeps): void {
  app.get('/memory', async (c) => {
    const agent = c.req.query('agent') || undefined;
    const kind = KINDS.find((value) => value === c.req.query('kind'));
    const provenance = c.req.query('provenance') || undefined;
    const cursor = c.req.query('cursor') || null;
    const q = c.req.query('q') || undefined;
    const provenancesCursor = c.req.query('provenances_cursor') || null;
    const here = { agent, kind, provenance, q, cursor, provenances_cursor: provenancesCursor };
    const [{ memories, next_cursor }, provenances, search] = await Promise.all([
      api<{ memories: MemoryRow[]; next_cursor: string | null }>('agent-memory/admin/memories/list', {
        ...(agent ? { agent_id: agent } : {}),
        ...(kind ? { kind } : {}),
        ...(provenance ? { provenance } : {}),
        limit: 50,
        cursor,
      }),
      agent ? api('agent-memory/admin/provenances/list', { agent_id: agent, limit: 100, cursor: provenancesCursor }) : null,
      agent && q ? api<{ hits: Hit[] }>('agent-memory/mem/query', { agent_id: agent, q, k: 10 }) : null,
    ]);
    const frame = frameOf(c, base);
    return c.html(
      <Layout frame={frame} title="Memory" current="Memory">
        <form method="get" action={`${base}/memory`} class="toolbar">
          <label for="memory-agent">Agent</label>
          <input id="memory-agent" name="agent" value={agent ?? ''} />
          <label for="memory-kind">Kind</label>
          <select id="memory-kind" name="kind">
            <option value="">any</option>
            {KINDS.map((value) => (
              <option value={value} selected={value === kind}>
                {value}
              </option>
            ))}
          </select>
          <label for="memory-provenance">Provenance</label>
          <input id="memory-provenance" name="provenance" value={provenance ?? ''} />
          <button type="submit">Filter</button>
        </form>
        <Table
          caption="Memories"
          head={['Agent', 'Kind', 'Provenance', 'Text', 'Created']}
          empty="No memories match."
          count={memories.length}
          rows={memories.map((memory) => (
            <tr>
              <td>{memory.agent_id}</td>
              <td>{memory.kind}</td>
              <td class="long">
                <Revealed text={memory.provenance} />
              </td>
              <td class="text">
                <Revealed text={memory.text} />
                {memory.text_truncated ? '…' : ''}
              </td>
              <td>{when(memory.created_at)}</td>
            </tr>
          ))}
        />
        <Pager path={`${base}/memory`} params={here} next={next_cursor} label="Next page of memories" />
        {agent && provenances ? (
          <AgentTools
            base={base}
            agent={agent}
            csrf={frame.session.csrf}
            q={q}
            hits={search?.hits ?? null}
            provenances={provenances.provenances}
            pager={{ params: here, next: provenances.next_cursor }}
          />
        ) : (
          <p class="hint">Filter by an agent to search its memories by meaning or forget them by provenance.</p>
        )}
      </Layout>,
    );
  });

  app.post('/memory/forget', async (c) => {
    const form = await c.req.parseBody();
    const agentId = exactField(form, 'agent_id') ?? '';
    const provenance = exactField(form, 'provenance') ?? '';
    const { deleted } = await api('agent-memory/mem/forget', { agent_id: agentId, provenance });
    return redirectWith(c, `${base}/memory?agent=${encodeURIComponent(agentId)}`, {
      kind: 'ok',
      text: `Forgot ${deleted} memories of ${agentId} from ${revealedText(provenance)}.`,
    });
  });
}
