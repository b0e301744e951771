import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import { type CoreConfigInput, coreConfigSchema } from '../config.js';
import { newCredential } from '../credentials.js';
import { createKernel, type Kernel, type KernelAdapters, type KernelSurface } from '../kernel/kernel.js';
import type { AnyModule } from '../kernel/module.js';
import { createLogger } from '../logger.js';

/** A response as tests see it. */
// biome-ignore lint/suspicious/noExplicitAny: tests read whichever fields the route under test returns
export interface TestResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
}

/** A kernel started for a test, listening on a real port. */
export interface TestKernel {
  kernel: Kernel;
  /** `http://127.0.0.1:<port>`. */
  url: string;
  bridgeKey: string;
  /**
   * POSTs JSON to `/functions/v1/<path>` (e.g. `agent-memory/mem/write`).
   * `credential` goes in `Authorization: Bearer`; omit it to send none.
   */
  // biome-ignore lint/suspicious/noExplicitAny: tests read whichever fields the route under test returns
  call<T = any>(
    path: string,
    body?: unknown,
    options?: { credential?: string; headers?: Record<string, string>; method?: string },
  ): Promise<TestResponse<T>>;
  /** Stops the kernel (and closes the database unless `keepDatabase`). */
  stop(): Promise<void>;
}

/**
 * Starts a kernel with `modules` on a real port 0 for end-to-end tests
 * (DESIGN.md convention 14). Responses are checked against their schemas.
 */
export async function startTestKernel(options: {
  modules: readonly AnyModule[];
  adapters: KernelAdapters;
  config?: Partial<CoreConfigInput>;
  moduleConfigs?: Record<string, unknown>;
  logger?: Logger;
  listen?: boolean;
  /** Surfaces mounted beside the API (e.g. the MCP server). */
  surfaces?: readonly KernelSurface[];
}): Promise<TestKernel> {
  const bridgeKey = newCredential('bk_');
  const config = coreConfigSchema.parse({
    bridgeKey,
    masterKey: randomBytes(32).toString('base64'),
    port: 0,
    ...options.config,
    http: { validateResponses: true, rateLimitPerMinute: 0, failedAuthPerMinute: 0, ...options.config?.http },
    jobs: { pollIntervalMs: 50, retryBaseMs: 20, retryMaxMs: 200, ...options.config?.jobs },
  });
  const kernel = createKernel({
    config,
    modules: options.modules,
    moduleConfigs: options.moduleConfigs,
    adapters: options.adapters,
    surfaces: options.surfaces,
    logger: options.logger ?? createLogger({ level: process.env.AGENTINFRA_TEST_LOG_LEVEL ?? 'silent' }),
  });
  await kernel.start();
  const { url } = options.listen === false ? { url: '' } : await kernel.listen({ port: 0, host: '127.0.0.1' });
  return {
    kernel,
    url,
    bridgeKey: config.bridgeKey,
    async call(path, body, callOptions) {
      const headers: Record<string, string> = { 'content-type': 'application/json', ...callOptions?.headers };
      if (callOptions?.credential) headers.authorization = `Bearer ${callOptions.credential}`;
      const method = callOptions?.method ?? 'POST';
      const init: RequestInit = { method, headers };
      if (method !== 'GET' && method !== 'HEAD')
        init.body = body === undefined ? '' : typeof body === 'string' ? body : JSON.stringify(body);
      const response = url ? await fetch(`${url}/functions/v1/${path}`, init) : await kernel.app.request(`/functions/v1/${path}`, init);
      const text = await response.text();
      let parsed: unknown = text;
      try {
        parsed = text ? JSON.parse(text) : null;
      } catch {
        parsed = text;
      }
      return { status: response.status, headers: response.headers, body: parsed as never };
    },
    stop: () => kernel.stop(),
  };
}

/**
 * Creates each agent (unless `create: false`, for a restarted server whose
 * store already has them) and issues it a device key, through the identity
 * module's routes with the bridge key.
 * @returns the device key of each agent.
 * @throws Error with the status and body when a call does not answer 200.
 */
export async function seedAgentKeys<A extends string>(
  server: TestKernel,
  agents: readonly A[],
  options: { create?: boolean } = {},
): Promise<Record<A, string>> {
  const bridge = { credential: server.bridgeKey };
  const expectOk = (response: TestResponse, what: string) => {
    if (response.status !== 200) throw new Error(`${what}: ${response.status} ${JSON.stringify(response.body)}`);
    return response;
  };
  const keys = {} as Record<A, string>;
  for (const agent of agents) {
    if (options.create !== false) {
      expectOk(
        await server.call('agent-identity/agents/create', { agent_id: agent, display_name: agent }, bridge),
        `create agent ${agent}`,
      );
    }
    const issued = expectOk(
      await server.call('agent-identity/device/issue', { agent_id: agent, label: 'test' }, bridge),
      `issue key for ${agent}`,
    );
    keys[agent] = issued.body.device_key;
  }
  return keys;
}
