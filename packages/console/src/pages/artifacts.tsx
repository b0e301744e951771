import { ActionForm, Pager, Table, when } from '../components.js';
import { type ConsoleApp, exactField, frameOf, type PageDeps, redirectWith } from '../context.js';
import { Layout } from '../layout.js';
import { revealedText } from '../reveal-text.js';
import { Revealed } from '../revealed.js';

interface ArtifactRow {
  artifact_id: string;
  agent_id: string;
  key: string;
  mime: string;
  size: number;
  sha256: string | null;
  status: string;
  created_at: string;
  expires_at: string;
  active_grants: number;
}

/** Bytes as a short human size. */
function size(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${value.toFixed(1)} ${units[unit]}`;
}

/** Artifacts: per agent or all, with status, size, sha256, expiry and live grants; per artifact its grants, each revocable. */
export function registerArtifacts(app: ConsoleApp, { api, base }: PageDeps): void {
  app.get('/artifacts', async (c) => {
    const agent = c.req.query('agent') || undefined;
    const cursor = c.req.query('cursor') || null;
    const { artifacts, next_cursor } = await api<{ artifacts: ArtifactRow[]; next_cursor: string | null }>(
      'agent-artifacts/admin/artifacts/list',
      { ...(agent ? { agent_id: agent } : {}), limit: 50, cursor },
    );
    return c.html(
      <Layout frame={frameOf(c, base)} title="Artifacts" current="Artifacts">
        <form method="get" action={`${base}/artifacts`} class="toolbar">
          <label for="artifact-agent">Agent</label>
          <input id="artifact-agent" name="agent" value={agent ?? ''} />
          <button type="submit">Filter</button>
        </form>
        <Table
          caption="Artifacts"
          head={['Agent', 'Key', 'Status', 'Size', 'SHA-256', 'Expires', 'Live grants']}
          empty="No artifacts."
          count={artifacts.length}
          rows={artifacts.map((artifact) => (
            <tr>
              <td>{artifact.agent_id}</td>
              <td>
                <a href={`${base}/artifacts/${encodeURIComponent(artifact.artifact_id)}`}>
                  <Revealed text={artifact.key} />
                </a>
              </td>
              <td>{artifact.status}</td>
              <td>{size(artifact.size)}</td>
              <td>
                <code class="hash">{artifact.sha256 ? `${artifact.sha256.slice(0, 16)}…` : '—'}</code>
              </td>
              <td>{when(artifact.expires_at)}</td>
              <td>{artifact.active_grants}</td>
            </tr>
          ))}
        />
        <Pager path={`${base}/artifacts`} params={{ agent }} next={next_cursor} />
      </Layout>,
    );
  });

  app.get('/artifacts/:id', async (c) => {
    const cursor = c.req.query('cursor') || null;
    const artifactId = c.req.param('id');
    const { agent_id, grants, next_cursor } = await api<{
      agent_id: string;
      grants: Array<{ grant_id: string; to_agent: string; created_at: string; expires_at: string; state: string }>;
      next_cursor: string | null;
    }>('agent-artifacts/admin/grants/list', { artifact_id: artifactId, limit: 50, cursor });
    const listed: { artifacts: ArtifactRow[] } = await api('agent-artifacts/admin/artifacts/list', {
      agent_id,
      artifact_id: artifactId,
      limit: 1,
    });
    const artifact = listed.artifacts[0];
    const frame = frameOf(c, base);
    return c.html(
      <Layout
        frame={frame}
        title={`Artifact ${revealedText(artifact?.key ?? artifactId)}`}
        current="Artifacts"
        crumbs={[['Artifacts', `${base}/artifacts`]]}
      >
        <dl class="fields">
          <dt>Id</dt>
          <dd>
            <code>{artifactId}</code>
          </dd>
          <dt>Owner</dt>
          <dd>
            <a href={`${base}/artifacts?agent=${encodeURIComponent(agent_id)}`}>{agent_id}</a>
          </dd>
          {artifact ? (
            <>
              <dt>Key</dt>
              <dd class="wrap">
                <Revealed text={artifact.key} />
              </dd>
              <dt>Status</dt>
              <dd>{artifact.status}</dd>
              <dt>MIME type</dt>
              <dd>
                <Revealed text={artifact.mime} />
              </dd>
              <dt>Size</dt>
              <dd>
                {size(artifact.size)} ({artifact.size.toLocaleString('en')} bytes)
              </dd>
              <dt>Created</dt>
              <dd>{when(artifact.created_at)}</dd>
              <dt>Expires</dt>
              <dd>{when(artifact.expires_at)}</dd>
              <dt>SHA-256</dt>
              <dd class="copyable">
                {artifact.sha256 ? (
                  <>
                    <code id="artifact-sha256" class="hash full">
                      {artifact.sha256}
                    </code>
                    <button type="button" class="copy" data-copy="artifact-sha256" aria-label="Copy SHA-256">
                      Copy
                    </button>
                  </>
                ) : (
                  '— (not committed yet)'
                )}
              </dd>
            </>
          ) : null}
        </dl>
        <Table
          caption="Grants"
          head={['To agent', 'State', 'Created', 'Expires', '']}
          empty="No grants."
          count={grants.length}
          rows={grants.map((grant) => (
            <tr>
              <td>{grant.to_agent}</td>
              <td>{grant.state}</td>
              <td>{when(grant.created_at)}</td>
              <td>{when(grant.expires_at)}</td>
              <td>
                {grant.state === 'active' ? (
                  <ActionForm
                    action={`${base}/artifacts/${encodeURIComponent(artifactId)}/revoke`}
                    csrf={frame.session.csrf}
                    label="Revoke"
                    ariaLabel={`Revoke grant to ${grant.to_agent}`}
                    fields={{ to_agent: grant.to_agent }}
                    confirm={`End every live grant of this artifact to ${grant.to_agent}?`}
                    danger
                  />
                ) : null}
              </td>
            </tr>
          ))}
        />
        <Pager path={`${base}/artifacts/${encodeURIComponent(artifactId)}`} params={{}} next={next_cursor} />
      </Layout>,
    );
  });

  app.post('/artifacts/:id/revoke', async (c) => {
    const artifactId = c.req.param('id');
    const form = await c.req.parseBody();
    const toAgent = exactField(form, 'to_agent') ?? '';
    await api('agent-artifacts/revoke', { artifact_id: artifactId, to_agent: toAgent });
    return redirectWith(c, `${base}/artifacts/${encodeURIComponent(artifactId)}`, { kind: 'ok', text: `Grants to ${toAgent} revoked.` });
  });
}
