import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AgentInfraError, createClient } from '@agentinfra/client';
import { runAgentFlow } from './agent-flow.js';

/** Stops with `message` on stderr and exit 2, before any request. */
function usage(message: string): never {
  process.stderr.write(`${message}\n`);
  process.exit(2);
}

/**
 * `pnpm start` with AGENTINFRA_KEY (the agent's device key) and
 * AGENTINFRA_AGENT_ID set, and AGENTINFRA_URL when the server is not at
 * http://127.0.0.1:8787. Exit 2 when one is missing or malformed, 1 when the
 * server refuses a call.
 */
const agentId = process.env.AGENTINFRA_AGENT_ID;
const key = process.env.AGENTINFRA_KEY;
if (!key || !agentId) {
  const missing = [key ? '' : "AGENTINFRA_KEY (the agent's device key)", agentId ? '' : 'AGENTINFRA_AGENT_ID'].filter(Boolean);
  usage(`Set ${missing.join(' and ')}; AGENTINFRA_URL too when the server is not at http://127.0.0.1:8787.`);
}
let client: ReturnType<typeof createClient>;
try {
  client = createClient();
} catch (error) {
  if (!(error instanceof AgentInfraError)) throw error;
  usage(`AGENTINFRA_URL or AGENTINFRA_KEY: ${error.message}`);
}
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
