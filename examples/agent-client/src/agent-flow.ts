import type { AgentInfraClient } from '@agentinfra/client';

/** What one run of the agent did, for printing. */
export interface AgentFlowReport {
  /** The memory /mem/query found for the question, best first. */
  recalled: string;
  /** The secret as read back. */
  secret: string;
  /** The committed artifact. */
  artifact: { artifact_id: string; size: number; sha256: string };
}

/**
 * What an agent typically does with agentinfra, through the typed client:
 * remembers two facts and recalls one by meaning, keeps an API token in its
 * secret store and reads it back, and uploads a report file as an artifact
 * (register → PUT → commit with SHA-256, in one call).
 * @param agentId the agent the client's key belongs to.
 * @param reportPath a file to upload.
 * @throws AgentInfraError when the server refuses a call (e.g. 401 for a wrong key).
 */
export async function runAgentFlow(client: AgentInfraClient, agentId: string, reportPath: string): Promise<AgentFlowReport> {
  const scope = ['self'];
  await client.memory.write({
    agent_id: agentId,
    kind: 'semantic',
    text: 'The staging database is rebuilt every night at 02:00 UTC.',
    provenance: 'onboarding',
    scope,
  });
  await client.memory.write({
    agent_id: agentId,
    kind: 'semantic',
    text: 'The user prefers answers in French.',
    provenance: 'chat',
    scope,
  });
  const { hits } = await client.memory.query({ agent_id: agentId, q: 'when does staging get recreated?', k: 1, scope });

  await client.identity.secrets.put({ agent_id: agentId, key: 'weather_api_token', value: 'tok_example_123' });
  const { value } = await client.identity.secrets.get({ agent_id: agentId, key: 'weather_api_token' });

  const artifact = await client.artifacts.upload({ agent_id: agentId, key: 'reports/nightly.md', mime: 'text/markdown', data: reportPath });
  return { recalled: hits[0]?.text ?? '(nothing)', secret: value, artifact };
}
