import { userInfo } from 'node:os';
import { AgentInfraError, type AuditActor, type AuditLog, type AuditOutcome } from '@agentinfra/core';

/** The OS user running the CLI; `unknown` where the system has no entry for it (some containers). */
function osUser(): string {
  try {
    return userInfo().username;
  } catch {
    return 'unknown';
  }
}

/**
 * Who acted when an operator ran a CLI command: no credential was
 * presented, so the kind is `system`, and the id `cli:<OS user>` says it was
 * the CLI and who ran it.
 */
export function cliActor(): AuditActor {
  return { kind: 'system', id: `cli:${osUser()}`.slice(0, 128), agent_id: null };
}

/** An audit event as a route declares it: action, subject agent, and target from the result (`undefined` on failure). */
export interface CliAuditEvent<T> {
  action: string;
  agentId: string;
  target: (result: T | undefined) => string;
}

/**
 * Runs `operation` and records it in the audit log as the server records
 * the route of the same action (action, target, subject agent, outcome,
 * `{ status }` on failure), with {@link cliActor} as the actor. A failure to
 * record is reported on stderr, not thrown: the operation is done, and its
 * result (a device key shown once) must still be printed.
 * @throws the operation's error, after recording it as `failed`.
 */
export async function auditedAsCli<T>(audit: AuditLog, event: CliAuditEvent<T>, operation: () => Promise<T>): Promise<T> {
  const record = (outcome: AuditOutcome, result: T | undefined, detail: Record<string, unknown> | null) =>
    audit
      .record({ action: event.action, outcome, target: event.target(result), actor: cliActor(), agentId: event.agentId, detail })
      .catch((error: unknown) =>
        process.stderr.write(`agentinfra: could not record ${event.action} in the audit log: ${(error as Error).message}\n`),
      );
  let result: T;
  try {
    result = await operation();
  } catch (error) {
    await record('failed', undefined, { status: error instanceof AgentInfraError ? error.status : 500 });
    throw error;
  }
  await record('success', result, null);
  return result;
}
