import { agentIdSchema } from '@agentinfra/core';
import type { IdentityService } from '@agentinfra/module-identity';
import { CliError } from '../cli-error.js';
import { buildKernel } from '../server.js';

function checkAgentId(agentId: string): void {
  const parsed = agentIdSchema.safeParse(agentId);
  if (!parsed.success) throw new CliError(`--agent: ${parsed.error.issues[0]?.message ?? 'invalid agent id'}`, 2);
}

async function withIdentity<T>(config: string | undefined, run: (identity: IdentityService) => Promise<T>): Promise<T> {
  const { kernel } = await buildKernel({ file: config });
  try {
    await kernel.migrate();
    return await run(kernel.service<IdentityService>('agent-identity'));
  } finally {
    await kernel.stop();
  }
}

/** `agentinfra issue-device`: issues a device key straight in the database and prints it once. */
export async function runIssueDevice(options: {
  config?: string;
  agent: string;
  label: string;
  ttlDays?: number;
  json?: boolean;
}): Promise<void> {
  checkAgentId(options.agent);
  const issued = await withIdentity(options.config, (identity) =>
    identity.issueDevice({ agent_id: options.agent, label: options.label, ttl_days: options.ttlDays }),
  );
  if (options.json) {
    process.stdout.write(`${JSON.stringify(issued)}\n`);
    return;
  }
  process.stdout.write(
    `device_id:  ${issued.device_id}\nexpires_at: ${issued.expires_at}\ndevice_key: ${issued.device_key}\n(the key is shown once: store it now)\n`,
  );
}

/** `agentinfra agents create`: creates an agent straight in the database. */
export async function runAgentsCreate(options: { config?: string; agent: string; name: string; json?: boolean }): Promise<void> {
  checkAgentId(options.agent);
  const created = await withIdentity(options.config, (identity) =>
    identity.createAgent({ agent_id: options.agent, display_name: options.name }),
  );
  process.stdout.write(options.json ? `${JSON.stringify(created)}\n` : `created agent ${created.agent_id} at ${created.created_at}\n`);
}
