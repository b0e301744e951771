import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import { FUNCTIONS_BASE, type Kernel } from '@agentinfra/core';

/** A refused or failed route call, with the API's CONTRACT.md code and message. */
export class ConsoleApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** Calls `/functions/v1/<route>` with the bridge key; resolves with the JSON body or throws {@link ConsoleApiError}. */
// biome-ignore lint/suspicious/noExplicitAny: pages read the fields of the route they call, whose schema the API validates
export type ConsoleApi = <T = any>(route: string, body?: Record<string, unknown>) => Promise<T>;

/** The address of the operator whose console request is being answered (see {@link asOperator}). */
const operatorClient = new AsyncLocalStorage<string>();

/** Runs `work` with `client` as the address the API calls it makes are made for (the audit log's `client`). */
export function asOperator<T>(client: string, work: () => T): T {
  return operatorClient.run(client, work);
}

/**
 * The console's way to the modules: every operation goes through the HTTP
 * route layer in process with the bridge key, so validation, audit events
 * and errors are exactly the API's (except that reads through read-only
 * routes are not audited as bridge key uses, so page views do not bury the
 * actions in the audit log); the calls carry the operator's address
 * (inside {@link asOperator}), so audit events and the failed-authentication
 * limit see the operator, not `unknown`.
 */
export function createConsoleApi(kernel: Kernel): ConsoleApi {
  return async (route, body = {}) => {
    // Page views read through read-only routes and are not audited; actions (and routes that declare an audit event) are.
    const env = { client: operatorClient.getStore() ?? 'console', auditReads: false };
    const response = await kernel.app.request(
      `${FUNCTIONS_BASE}/${route}`,
      {
        method: 'POST',
        headers: {
          authorization: `Bearer ${kernel.config.bridgeKey}`,
          'content-type': 'application/json',
          accept: 'application/json',
          'x-request-id': `console-${randomUUID()}`,
        },
        body: JSON.stringify(body),
      },
      env,
    );
    const text = await response.text();
    const parsed = text ? JSON.parse(text) : {};
    if (response.ok) return parsed;
    const error = (parsed as { error?: { code?: string; message?: string } }).error;
    throw new ConsoleApiError(response.status, error?.code ?? 'internal', error?.message ?? `HTTP ${response.status}`);
  };
}
