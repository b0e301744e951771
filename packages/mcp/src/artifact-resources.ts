import { ErrorCode, type ReadResourceResult, type Resource, type ResourceTemplate } from '@modelcontextprotocol/sdk/types.js';
import { type CallerContext, invokeRoute, type RouteOutcome } from './route-call.js';
import { RpcError } from './rpc-error.js';

const ARTIFACTS = 'agent-artifacts';
/** URI scheme and prefix of artifact resources: `agentinfra://artifacts/<artifact_id>`. */
export const ARTIFACT_URI_PREFIX = 'agentinfra://artifacts/';
/** MCP's "resource not found" error code (MCP 2025-11-25 "Resources: Error Handling"). */
const RESOURCE_NOT_FOUND = -32002;

/**
 * The JSON-RPC error of a refused agent-artifacts call: -32002 for
 * `not_found` (404), -32603 Internal error for a 5xx, -32602 Invalid params
 * for any other refusal (`invalid_request`, `conflict` for a pending or
 * expired artifact, `forbidden`, `rate_limited`). The message is the tool
 * error's first line, `<code>: <message>`; `data.error` is the API's error
 * (with `retry_after_seconds` when rate limited), beside `data.uri` on reads.
 */
function resourceError(outcome: Extract<RouteOutcome, { ok: false }>, uri?: string): RpcError {
  const { error } = outcome.error;
  const code = outcome.status === 404 ? RESOURCE_NOT_FOUND : outcome.status >= 500 ? ErrorCode.InternalError : ErrorCode.InvalidParams;
  const retry = outcome.retryAfterSeconds === undefined ? {} : { retry_after_seconds: outcome.retryAfterSeconds };
  return new RpcError(code, `${error.code}: ${error.message}`, { ...(uri === undefined ? {} : { uri }), error: { ...error, ...retry } });
}

/** The resource template of committed artifacts. */
export function artifactTemplate(maxInlineBytes: number): ResourceTemplate {
  return {
    uriTemplate: `${ARTIFACT_URI_PREFIX}{artifact_id}`,
    name: 'artifact',
    title: 'Artifact',
    description: `A committed artifact of your agent by artifact_id: its text, or its bytes as base64, up to ${maxInlineBytes} bytes; a larger one reads as a short-lived download link (text/uri-list).`,
  };
}

/** Media types whose bytes are returned as text rather than base64. */
function isTextual(mime: string): boolean {
  const type = mime.split(';')[0]!.trim().toLowerCase();
  return (
    type.startsWith('text/') ||
    ['application/json', 'application/xml', 'application/javascript', 'application/yaml', 'application/x-ndjson'].includes(type) ||
    type.endsWith('+json') ||
    type.endsWith('+xml')
  );
}

/**
 * One page (50) of the caller's committed artifacts as resources, newest
 * first; `cursor` is the artifacts /list cursor.
 */
export async function listArtifactResources(
  caller: CallerContext,
  cursor: string | undefined,
): Promise<{ resources: Resource[]; nextCursor?: string }> {
  const outcome = await invokeRoute(caller, ARTIFACTS, '/list', { agent_id: caller.principal.agentId, limit: 50, cursor: cursor ?? null });
  if (!outcome.ok) throw resourceError(outcome);
  const page = outcome.body as {
    artifacts: Array<{ artifact_id: string; key: string; mime: string; size: number; status: string }>;
    next_cursor: string | null;
  };
  const resources = page.artifacts
    .filter((artifact) => artifact.status === 'committed')
    .map((artifact) => ({
      uri: `${ARTIFACT_URI_PREFIX}${artifact.artifact_id}`,
      name: artifact.key,
      mimeType: artifact.mime,
      size: artifact.size,
    }));
  return { resources, ...(page.next_cursor ? { nextCursor: page.next_cursor } : {}) };
}

/**
 * Reads an artifact resource through agent-artifacts /download (so the same
 * authorization applies): up to `maxInlineBytes` its text or base64 blob,
 * otherwise the signed download link as `text/uri-list`. The link is fetched
 * in process when this server serves it, else over HTTP (it came from this
 * server's own blob store, never from the client).
 * @throws RpcError -32002 for an unknown or foreign artifact, -32602 for a
 *   pending or expired one (see {@link resourceError}), -32603 when its bytes
 *   cannot be fetched.
 */
export async function readArtifactResource(caller: CallerContext, uri: string, maxInlineBytes: number): Promise<ReadResourceResult> {
  // Artifact ids need no percent-encoding, and are written into URIs as they are (see listArtifactResources).
  const artifactId = uri.startsWith(ARTIFACT_URI_PREFIX) ? uri.slice(ARTIFACT_URI_PREFIX.length) : '';
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(artifactId)) throw new RpcError(RESOURCE_NOT_FOUND, `No resource ${uri}.`, { uri });
  const outcome = await invokeRoute(caller, ARTIFACTS, '/download', { artifact_id: artifactId });
  if (!outcome.ok) throw resourceError(outcome, uri);
  const download = outcome.body as { mime: string; size: number; url: string; expires_at: string };
  if (download.size > maxInlineBytes) {
    return {
      contents: [
        {
          uri,
          mimeType: 'text/uri-list',
          text: download.url,
          _meta: { size: download.size, mime: download.mime, expires_at: download.expires_at },
        },
      ],
    };
  }
  const target = new URL(download.url);
  let response = await caller.appRequest(`${target.pathname}${target.search}`, { method: 'GET' });
  if (response.status === 404) {
    await response.body?.cancel();
    response = await fetch(download.url);
  }
  if (!response.ok) {
    await response.body?.cancel();
    throw new RpcError(ErrorCode.InternalError, `The artifact could not be read (HTTP ${response.status}).`);
  }
  const bytes = Buffer.from(await response.arrayBuffer());
  if (isTextual(download.mime)) {
    const text = new TextDecoder('utf-8', { fatal: false }).decode(bytes);
    return { contents: [{ uri, mimeType: download.mime, text }] };
  }
  return { contents: [{ uri, mimeType: download.mime, blob: bytes.toString('base64') }] };
}
