/**
 * Run with `pnpm --filter @agentinfra/example-embed-library start`
 * (`AGENTINFRA_PORT` picks the port; default 0, any free one).
 * Creates an agent, remembers three facts and asks a question — with no HTTP
 * in between — then serves the same API over HTTP next to an app route, and
 * prints the URL and, once, a device key of the agent to call it with.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createWordVectorEmbedder } from '@agentinfra/adapter-wordvec';
import { serve } from '@hono/node-server';
import { startEmbedded } from './embedded-agent-infra.js';

const port = Number(process.env.AGENTINFRA_PORT ?? 0);
if (!Number.isInteger(port) || port < 0 || port > 65_535) {
  process.stderr.write(`AGENTINFRA_PORT must be a port number (0 for any free port), not ${process.env.AGENTINFRA_PORT}.\n`);
  process.exit(2);
}

const infra = await startEmbedded({ dataDir: mkdtempSync(join(tmpdir(), 'agentinfra-embedded-')), embedder: createWordVectorEmbedder() });
await infra.identity.createAgent({ agent_id: 'helper', display_name: 'Helper bot' });
for (const text of ['The user is allergic to peanuts.', 'The user lives in Lisbon.', 'The user works night shifts at a hospital.']) {
  await infra.memory.write({ agent_id: 'helper', kind: 'semantic', text, provenance: 'onboarding', scope: ['self'] });
}
const { hits } = await infra.memory.query({ agent_id: 'helper', q: 'what food should I avoid ordering?', k: 1, scope: ['self'] });
process.stdout.write(`closest memory: ${hits[0]?.text} (score ${hits[0]?.score.toFixed(3)})\n`);
const { device_key } = await infra.identity.issueDevice({ agent_id: 'helper', label: 'embed-library example' });

const server = serve({ fetch: infra.app.fetch, port, hostname: '127.0.0.1' }, (info) => {
  process.stdout.write(`my app with agentinfra inside listening on http://127.0.0.1:${info.port} (Ctrl-C to stop)\n`);
  process.stdout.write(`device key of agent helper (shown once): ${device_key}\n`);
});
for (const signal of ['SIGINT', 'SIGTERM'] as const)
  process.once(signal, () => {
    server.close();
    void infra.kernel.stop();
  });
