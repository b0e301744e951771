import { openDownload } from './artifact-download.js';
import { type UploadInput, uploadArtifact } from './artifact-transfer.js';
import { type ClientOptions, transportOptions } from './client-options.js';
import { IDEMPOTENT_ROUTES, ROUTE_HELPERS, type RouteHelpers, type RoutePath, type Routes } from './generated/routes.js';
import { type CallOptions, postJson } from './transport.js';

/** Helpers of agent-artifacts beyond its routes. */
export interface ArtifactHelpers {
  /**
   * register → PUT (streamed once, SHA-256 computed on the way) → commit.
   * @returns the committed artifact (artifact_id, status, size, sha256).
   */
  upload(input: UploadInput, options?: CallOptions): Promise<Routes['agent-artifacts/commit']['response']>;
  /**
   * The bytes of an artifact as a stream: another agent's through a grant
   * token (`{ grant_token }`, via /fetch) or one's own (`{ artifact_id }`, via /download).
   */
  stream(target: { grant_token: string } | { artifact_id: string }, options?: CallOptions): Promise<ReadableStream<Uint8Array>>;
}

/** A client: `invoke` any route by its key, or use the namespaced helpers (`client.memory.write(…)`). */
export type AgentInfraClient = Omit<RouteHelpers, 'artifacts'> & {
  artifacts: RouteHelpers['artifacts'] & ArtifactHelpers;
  /**
   * Calls `POST /functions/v1/<path>` with `body`, typed by the route's own
   * declaration. Routes declared idempotent or read-only are retried after
   * network errors and 5xx; every route after 429 and the server's own 503
   * `unavailable` (honouring `Retry-After`). Redirects are not followed.
   * @throws AgentInfraError on any failure (CONTRACT.md error body, timeout, abort, network).
   */
  invoke<P extends RoutePath>(path: P, body: Routes[P]['request'], options?: CallOptions): Promise<Routes[P]['response']>;
};

/** Attaches one helper per route at its dotted position; a route that is also a namespace keeps its children. */
function helperTree(invoke: AgentInfraClient['invoke']): Record<string, unknown> {
  const root: Record<string, unknown> = {};
  for (const [dotted, path] of ROUTE_HELPERS) {
    const names = dotted.split('.');
    let node = root;
    for (const name of names.slice(0, -1)) {
      node[name] ??= {};
      node = node[name] as Record<string, unknown>;
    }
    const leaf = names.at(-1) as string;
    const call = (body: never, options?: CallOptions) => invoke(path, body, options);
    node[leaf] = Object.assign(call, node[leaf]);
  }
  return root;
}

/**
 * A typed client of an agentinfra server. Every call POSTs JSON to
 * `/functions/v1/<module>/<path>` with `Authorization: Bearer <key>` and
 * resolves with the parsed success body; failures are thrown as
 * {@link AgentInfraError} (never returned).
 * @throws AgentInfraError status 0 `invalid_request` for a bad option (see `ClientOptions`); the message never holds
 *   the key or the url.
 */
export function createClient(options: ClientOptions = {}): AgentInfraClient {
  const transport = transportOptions(options);
  const invoke = (<P extends RoutePath>(path: P, body: Routes[P]['request'], call?: CallOptions) =>
    postJson(transport, path, body, IDEMPOTENT_ROUTES.has(path), call)) as AgentInfraClient['invoke'];
  const helpers = helperTree(invoke) as Omit<RouteHelpers, 'artifacts'> & { artifacts: RouteHelpers['artifacts'] };
  const artifacts: ArtifactHelpers = {
    upload: (input, call) => uploadArtifact(helpers.artifacts, transport, input, call),
    async stream(target, call) {
      const { url: signed } =
        'grant_token' in target ? await helpers.artifacts.fetch(target, call) : await helpers.artifacts.download(target, call);
      return openDownload(transport, signed, call);
    },
  };
  return { ...helpers, artifacts: Object.assign(helpers.artifacts, artifacts), invoke };
}
