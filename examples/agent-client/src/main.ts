import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AgentInfraError, createClient } from '@agentinfra/client';
import { runAgentFlow } from './agent-flow.js';

/**
 * `pnpm start` with AGENTINFRA_URL (e.g. http://127.0.0.1:54321),
 * AGENTINFRA_KEY (the agent's device key) and AGENTINFRA_AGENT_ID set.
 */
const agentId = process.env.AGENTINFRA_AGENT_ID;
if (!agentId) {
  process.stderr.write('Set AGENTINFRA_URL, AGENTINFRA_KEY (a device key) and AGENTINFRA_AGENT_ID.\n');
  process.exit(2);
}
const client = createClient();
const reportPath = join(tmpdir(), `agent-client-report-${process.pid}.md`);
writeFileSync(reportPath, '# Nightly report\n\nAll checks passed.\n');
try {
  const report = await runAgentFlow(client, agentId, reportPath);
  process.stdout.write(`recalled: ${report.recalled}\n`);
  process.stdout.write(`secret: ${report.secret}\n`);
  process.stdout.write(`artifact: ${report.artifact.artifact_id} ${report.artifact.size} bytes sha256 ${report.artifact.sha256}\n`);
} catch (error) {
  if (!(error instanceof AgentInfraError)) throw error;
  process.stderr.write(`${error.status} ${error.code}: ${error.message} (request ${error.requestId ?? 'n/a'})\n`);
  process.exit(1);
}
