import { agentIdSchema } from '@agentinfra/core';
import { createAgentRequestSchema, type IdentityService, issueDeviceRequestSchema } from '@agentinfra/module-identity';
import type { z } from 'zod';
import { CliError } from '../cli-error.js';
import { buildKernel } from '../server.js';
import { auditedAsCli, type CliAuditEvent } from './cli-audit.js';

/** @throws CliError (exit 2) `--agent: <why>` when `agentId` is not a valid agent id. */
export function checkAgentId(agentId: string): void {
  const parsed = agentIdSchema.safeParse(agentId);
  if (!parsed.success) throw new CliError(`--agent: ${parsed.error.issues[0]?.message ?? 'invalid agent id'}`, 2);
}

/**
 * Parses a command's options with the request schema of the route that does
 * the same over HTTP, so the CLI refuses what the API refuses.
 * @param flags the option that carries each field (`{ label: '--label' }`).
 * @throws CliError (exit 2) `--label: <why>` for the first field that fails.
 */
function checkRequest<S extends z.ZodType>(schema: S, request: z.input<S>, flags: Record<string, string>): z.output<S> {
  const parsed = schema.safeParse(request);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const field = String(issue?.path[0] ?? '');
  throw new CliError(`${flags[field] ?? field}: ${issue?.message ?? 'invalid value'}`, 2);
}

/** Runs one identity operation on the configured database and records `event` in its audit log, as the HTTP route does. */
async function withIdentity<T>(
  config: string | undefined,
  event: CliAuditEvent<T>,
  run: (identity: IdentityService) => Promise<T>,
): Promise<T> {
  const { kernel } = await buildKernel({ file: config });
  try {
    await kernel.migrate();
    const identity = kernel.service<IdentityService>('agent-identity');
    return await auditedAsCli(kernel.audit, event, () => run(identity));
  } finally {
    await kernel.stop();
  }
}

/**
 * `agentinfra issue-device`: issues a device key straight in the database,
 * records `device.issue` in the audit log (actor `cli:<OS user>`, never the
 * key) and prints the key once.
 */
export async function runIssueDevice(options: {
  config?: string;
  agent: string;
  label: string;
  ttlDays?: number;
  json?: boolean;
}): Promise<void> {
  const request = checkRequest(
    issueDeviceRequestSchema,
    { agent_id: options.agent, label: options.label, ttl_days: options.ttlDays },
    { agent_id: '--agent', label: '--label', ttl_days: '--ttl-days' },
  );
  const event: CliAuditEvent<{ device_id: string }> = {
    action: 'device.issue',
    agentId: options.agent,
    target: (result) => `agent:${options.agent}${result ? `/device:${result.device_id}` : ''}`,
  };
  const issued = await withIdentity(options.config, event, (identity) => identity.issueDevice(request));
  if (options.json) {
    process.stdout.write(`${JSON.stringify(issued)}\n`);
    return;
  }
  process.stdout.write(
    `device_id:  ${issued.device_id}\nexpires_at: ${issued.expires_at}\ndevice_key: ${issued.device_key}\n(the key is shown once: store it now)\n`,
  );
}

/** `agentinfra agents create`: creates an agent straight in the database and records `agent.create` in the audit log. */
export async function runAgentsCreate(options: { config?: string; agent: string; name: string; json?: boolean }): Promise<void> {
  const request = checkRequest(
    createAgentRequestSchema,
    { agent_id: options.agent, display_name: options.name },
    { agent_id: '--agent', display_name: '--name' },
  );
  const event = { action: 'agent.create', agentId: options.agent, target: () => `agent:${options.agent}` };
  const created = await withIdentity(options.config, event, (identity) => identity.createAgent(request));
  process.stdout.write(options.json ? `${JSON.stringify(created)}\n` : `created agent ${created.agent_id} at ${created.created_at}\n`);
}
