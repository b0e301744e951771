import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import {
  CallToolRequestSchema,
  CallToolResultSchema,
  ListResourcesRequestSchema,
  ListResourcesResultSchema,
  ListResourceTemplatesRequestSchema,
  ListResourceTemplatesResultSchema,
  ListToolsRequestSchema,
  ListToolsResultSchema,
  ReadResourceRequestSchema,
  ReadResourceResultSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { errorResult } from './tool-errors.js';

/** Options of {@link runStdioProxy}. */
export interface StdioProxyOptions {
  /** The agentinfra server: its base URL (`/mcp` is appended), or the MCP endpoint itself. */
  url: string;
  /** A device key or delegation token. */
  key: string;
  /** Where diagnostics go (default: stderr). Nothing but MCP messages is ever written to stdout. */
  log?: (line: string) => void;
  stdin?: NodeJS.ReadableStream;
  stdout?: NodeJS.WritableStream;
}

/** The server's MCP endpoint from a base URL (with or without `/functions/v1` or `/mcp`). */
export function mcpEndpointOf(url: string): URL {
  const endpoint = new URL(url);
  const path = endpoint.pathname.replace(/\/+$/, '').replace(/\/functions\/v1$/, '');
  endpoint.pathname = path.endsWith('/mcp') ? path : `${path}/mcp`;
  return endpoint;
}

/** Why an upstream call failed, as a CONTRACT.md code. */
function failureOf(error: unknown): { code: string; message: string } {
  if (error instanceof StreamableHTTPError && error.code === 401) {
    return { code: 'unauthenticated', message: 'The server refused the key: it is unknown, expired or revoked.' };
  }
  if (error instanceof StreamableHTTPError && error.code === 403) return { code: 'forbidden', message: error.message };
  return { code: 'upstream_unavailable', message: `The agentinfra server could not be reached: ${(error as Error).message}` };
}

/**
 * `agentinfra mcp`: serves the tools and resources of the agentinfra server at
 * `url` over stdio, forwarding every request to its `/mcp` endpoint (Streamable
 * HTTP) with `key`. The tool list is the server's own, so it is generated from
 * the same route declarations and filtered by what `key` may call. A tool call
 * the server cannot answer (unreachable, key expired) is an `isError` result.
 * @returns when stdin closes.
 * @throws Error when the first connection fails (bad URL, refused key), after logging why.
 */
export async function runStdioProxy(options: StdioProxyOptions): Promise<void> {
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const endpoint = mcpEndpointOf(options.url);
  const upstream = new Client({ name: 'agentinfra-stdio', version: '0.1.0' });
  const transport = new StreamableHTTPClientTransport(endpoint, { requestInit: { headers: { authorization: `Bearer ${options.key}` } } });
  try {
    await upstream.connect(transport);
  } catch (error) {
    const failure = failureOf(error);
    throw new Error(`${endpoint.origin}${endpoint.pathname}: ${failure.message}`);
  }
  const info = upstream.getServerVersion() ?? { name: 'agentinfra', version: '0.1.0' };
  const server = new Server(info, {
    capabilities: upstream.getServerCapabilities() ?? { tools: {}, resources: {} },
    instructions: upstream.getInstructions(),
  });
  server.setRequestHandler(ListToolsRequestSchema, (request) =>
    upstream.request({ method: 'tools/list', params: request.params }, ListToolsResultSchema),
  );
  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    try {
      return await upstream.request({ method: 'tools/call', params: request.params }, CallToolResultSchema);
    } catch (error) {
      const failure = failureOf(error);
      log(`agentinfra mcp: ${request.params.name}: ${failure.message}`);
      return errorResult({ error: failure });
    }
  });
  server.setRequestHandler(ListResourceTemplatesRequestSchema, (request) =>
    upstream.request({ method: 'resources/templates/list', params: request.params }, ListResourceTemplatesResultSchema),
  );
  server.setRequestHandler(ListResourcesRequestSchema, (request) =>
    upstream.request({ method: 'resources/list', params: request.params }, ListResourcesResultSchema),
  );
  server.setRequestHandler(ReadResourceRequestSchema, (request) =>
    upstream.request({ method: 'resources/read', params: request.params }, ReadResourceResultSchema),
  );
  const stdin = options.stdin ?? process.stdin;
  const stdio = new StdioServerTransport(stdin as never, (options.stdout ?? process.stdout) as never);
  const closed = new Promise<void>((resolve) => {
    stdin.once('end', resolve);
    stdio.onclose = () => resolve();
  });
  await server.connect(stdio);
  log(`agentinfra mcp: serving ${endpoint.origin}${endpoint.pathname} over stdio`);
  await closed;
  await server.close();
  await upstream.close();
}
