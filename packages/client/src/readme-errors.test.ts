import { readdirSync, readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { type AgentInfraError, createClient } from './index.js';
import { type StubServer, startStubServer } from './test-support/stub-server.js';

const sourceDir = new URL('./', import.meta.url);
const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
const errorsSection = readme.slice(readme.indexOf('## Errors'), readme.indexOf('\n## ', readme.indexOf('## Errors') + 1));

/** Every error code the client's own sources set (`code: '…'`, including both sides of a conditional). */
function codesSetByTheClient(): string[] {
  const files = readdirSync(sourceDir, { recursive: true, encoding: 'utf8' }).filter(
    (file) => file.endsWith('.ts') && !file.endsWith('.test.ts') && !file.startsWith('codegen') && !file.startsWith('test-support'),
  );
  const codes = new Set<string>();
  for (const file of files)
    for (const [assignment] of readFileSync(new URL(file, sourceDir), 'utf8').matchAll(/\bcode: [^,\n}]+/g))
      for (const [, code] of assignment.matchAll(/'([a-z_]+)'/g)) codes.add(code as string);
  return [...codes].sort();
}

// Regression: the README's Errors section left out `server_error` and the local `invalid_request`.
describe("the README's Errors section", () => {
  let stub: StubServer | undefined;
  afterEach(() => stub?.close());

  it('documents every code the client itself throws', () => {
    const codes = codesSetByTheClient();
    expect(codes).toContain('server_error');
    for (const code of codes) expect(errorsSection, code).toContain(`\`${code}\``);
  });

  it('server_error: a 5xx whose body is not a CONTRACT.md error keeps its status', async () => {
    stub = await startStubServer((_n, _request, response) => {
      response.writeHead(502, { 'content-type': 'text/html' });
      response.end('<html>502 Bad Gateway</html>');
    });
    const client = createClient({ url: stub.url, key: 'dk_x', retries: 0 });
    const error = await client.memory.write({ agent_id: 'a', kind: 'semantic', text: 'x', provenance: 'p', scope: ['self'] }).then(
      () => undefined,
      (failure: AgentInfraError) => failure,
    );
    expect(error).toMatchObject({ status: 502, code: 'server_error', message: 'HTTP 502: <html>502 Bad Gateway</html>' });
  });
});
