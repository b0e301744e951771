import { openDownload, type UploadInput, uploadArtifact } from './artifact-transfer.js';
import { IDEMPOTENT_ROUTES, ROUTE_HELPERS, type RouteHelpers, type RoutePath, type Routes } from './generated/routes.js';
import { DEFAULT_RETRY_POLICY } from './retry-policy.js';
import { type CallOptions, postJson, type TransportOptions } from './transport.js';

/** Where `agentinfra serve` listens by default. */
export const DEFAULT_URL = 'http://127.0.0.1:8787';

/** What {@link createClient} takes. */
export interface ClientOptions {
  /** The server's origin; default the `AGENTINFRA_URL` variable, else `http://127.0.0.1:8787` (`agentinfra serve`'s default). A trailing `/functions/v1` is accepted. */
  url?: string;
  /** Bearer credential (device key `dk_…`, delegation token `dt_…`, bridge key `bk_…`); default the `AGENTINFRA_KEY` variable. */
  key?: string;
  /** The fetch to use (default the global fetch of Node 20+ or the browser). */
  fetch?: typeof globalThis.fetch;
  /** Per attempt in ms (default 30,000; 0: no limit). */
  timeoutMs?: number;
  /** Retries after the first attempt (default 2); see `isRetryable` for which failures are retried. */
  retries?: number;
}

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
   * network errors and 5xx; every route after 429/503 (honouring `Retry-After`).
   * @throws AgentInfraError on any failure (CONTRACT.md error body, timeout, abort, network).
   */
  invoke<P extends RoutePath>(path: P, body: Routes[P]['request'], options?: CallOptions): Promise<Routes[P]['response']>;
};

function environment(name: string): string | undefined {
  const process = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process;
  return process?.env?.[name] || undefined;
}

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
 */
export function createClient(options: ClientOptions = {}): AgentInfraClient {
  const url = options.url ?? environment('AGENTINFRA_URL') ?? DEFAULT_URL;
  const fetchImpl = options.fetch ?? globalThis.fetch.bind(globalThis);
  const transport: TransportOptions = {
    url: url.replace(/\/+$/, '').replace(/\/functions\/v1$/, ''),
    key: options.key ?? environment('AGENTINFRA_KEY'),
    fetch: fetchImpl,
    timeoutMs: options.timeoutMs ?? 30_000,
    retry: { ...DEFAULT_RETRY_POLICY, retries: options.retries ?? DEFAULT_RETRY_POLICY.retries },
  };
  const invoke = (<P extends RoutePath>(path: P, body: Routes[P]['request'], call?: CallOptions) =>
    postJson(transport, path, body, IDEMPOTENT_ROUTES.has(path), call)) as AgentInfraClient['invoke'];
  const helpers = helperTree(invoke) as Omit<RouteHelpers, 'artifacts'> & { artifacts: RouteHelpers['artifacts'] };
  const artifacts: ArtifactHelpers = {
    upload: (input, call) => uploadArtifact(helpers.artifacts, fetchImpl, input, call),
    async stream(target, call) {
      const { url: signed } =
        'grant_token' in target ? await helpers.artifacts.fetch(target, call) : await helpers.artifacts.download(target, call);
      return openDownload(fetchImpl, signed, call);
    },
  };
  return { ...helpers, artifacts: Object.assign(helpers.artifacts, artifacts), invoke };
}
