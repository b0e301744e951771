import { MeshCallError, MeshHostError } from './host-error.js';

/** Connection settings shared by the mesh commands. */
export interface MeshConnection {
  /** Server base URL, with or without the `/functions/v1` suffix, e.g. `https://agents.example.com`. */
  url: string;
  /** Device key (or delegation token with mesh permissions, or the bridge key); default `AGENTINFRA_KEY`. */
  key?: string;
  /** Agent to act for: required with the bridge key, optional otherwise (the key's own agent). */
  agent?: string;
  /** Environment to read defaults from (default `process.env`). */
  env?: NodeJS.ProcessEnv;
}

/**
 * Parses an interval such as `30s`, `5m`, `1h`, `500ms` (a bare number means
 * seconds) into milliseconds.
 * @throws MeshHostError (exit 2) for anything else or below 100 ms.
 */
export function parseInterval(value: string, option: string): number {
  const match = /^(\d+)(ms|s|m|h)?$/.exec(value.trim());
  const factor = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 } as const;
  const ms = match ? Number(match[1]) * factor[(match[2] ?? 's') as keyof typeof factor] : Number.NaN;
  if (!Number.isSafeInteger(ms) || ms < 100)
    throw new MeshHostError(`${option} must be an interval like 30s, 5m, 1h or 500ms (at least 100ms).`, 2);
  return ms;
}

/** `AGENTINFRA_DEVICE_KEY`, the variable's name before it became `AGENTINFRA_KEY` (as for `agentinfra mcp`), with a warning on stderr. */
function deprecatedKey(env: NodeJS.ProcessEnv): string | undefined {
  const key = env.AGENTINFRA_DEVICE_KEY;
  if (key) process.stderr.write('agentinfra: AGENTINFRA_DEVICE_KEY is deprecated; set AGENTINFRA_KEY instead.\n');
  return key;
}

/** Resolves the credential, base URL and agent of a mesh command. @throws MeshHostError (exit 2) when the key or URL is missing or malformed. */
export function meshConnection(options: MeshConnection): { base: string; key: string; agent?: string } {
  const env = options.env ?? process.env;
  const key = options.key ?? env.AGENTINFRA_KEY ?? deprecatedKey(env);
  if (!key) throw new MeshHostError('A device key is required: pass --key or set AGENTINFRA_KEY.', 2);
  let url: URL;
  try {
    url = new URL(options.url);
  } catch {
    throw new MeshHostError(`--url must be an http(s) URL, got "${options.url}".`, 2);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new MeshHostError(`--url must be an http(s) URL, got "${options.url}".`, 2);
  const path = url.pathname.replace(/\/+$/, '');
  const base = `${url.origin}${path.endsWith('/functions/v1') ? path : `${path}/functions/v1`}`;
  return { base, key, ...(options.agent ? { agent: options.agent } : {}) };
}

/** ` (path: message; …)` for the fields a CONTRACT.md 400 names, or nothing (the message alone does not say which flag was wrong). */
function fieldsOf(fields: ReadonlyArray<{ path?: unknown; message?: unknown }> | undefined): string {
  if (!Array.isArray(fields) || fields.length === 0) return '';
  return ` (${fields.map((field) => `${String(field.path)}: ${String(field.message)}`).join('; ')})`;
}

/**
 * POSTs `body` to `agent-mesh/<path>` and returns the JSON (or, with
 * `text`, the text) answer.
 * @throws MeshCallError with the server's error code and message (never the key).
 */
export async function meshCall<T>(
  connection: { base: string; key: string },
  path: string,
  body: Record<string, unknown>,
  options: { text?: boolean; signal?: AbortSignal } = {},
): Promise<T> {
  let response: Response;
  try {
    response = await fetch(`${connection.base}/agent-mesh${path}`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${connection.key}`,
        'content-type': 'application/json',
        accept: options.text ? 'text/plain' : 'application/json',
      },
      body: JSON.stringify(body),
      signal: options.signal ?? null,
    });
  } catch (error) {
    if (options.signal?.aborted) throw error;
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    throw new MeshCallError(`${path}: cannot reach ${connection.base} (${cause?.code ?? cause?.message ?? (error as Error).message})`, 0);
  }
  const text = await response.text();
  if (!response.ok) {
    let detail = text.slice(0, 300);
    try {
      const parsed = JSON.parse(text) as {
        error?: { code?: string; message?: string; details?: { fields?: Array<{ path?: unknown; message?: unknown }> } };
      };
      if (parsed.error) detail = `${parsed.error.code}: ${parsed.error.message}${fieldsOf(parsed.error.details?.fields)}`;
    } catch {
      // Not a CONTRACT.md error body (a proxy's page): the start of the text is shown as is.
    }
    throw new MeshCallError(`${path}: HTTP ${response.status} ${detail}`, response.status);
  }
  return (options.text ? text : JSON.parse(text)) as T;
}
