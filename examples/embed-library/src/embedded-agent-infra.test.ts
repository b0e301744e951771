import { createHash } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Embedder } from '@agentinfra/core';
import { describe, expect, it } from 'vitest';
import { startEmbedded } from './embedded-agent-infra.js';

const bagOfWords: Embedder = {
  id: 'example-bag-of-words',
  dimensions: 32,
  async embed({ texts }) {
    return texts.map((text) => {
      const vector = new Float32Array(32);
      for (const word of text.toLowerCase().match(/[a-z]+/g) ?? []) vector[createHash('md5').update(word).digest()[0]! % 32]! += 1;
      const norm = Math.hypot(...vector) || 1;
      return vector.map((value) => value / norm);
    });
  },
};

describe('embedding agentinfra as a library', () => {
  it('calls services directly and serves the same API inside the host app', async () => {
    const infra = await startEmbedded({ dataDir: mkdtempSync(join(tmpdir(), 'agentinfra-example-')), embedder: bagOfWords });
    await infra.identity.createAgent({ agent_id: 'helper', display_name: 'Helper' });
    await infra.memory.write({ agent_id: 'helper', kind: 'semantic', text: 'the user lives in Lisbon', provenance: 'x', scope: ['self'] });
    const { hits } = await infra.memory.query({ agent_id: 'helper', q: 'where does the user live', k: 1, scope: ['self'] });
    expect(hits[0]?.text).toBe('the user lives in Lisbon');

    expect(await (await infra.app.request('/')).text()).toBe('my agent platform');
    const { device_key } = await infra.identity.issueDevice({ agent_id: 'helper', label: 'example' });
    const response = await infra.app.request('/functions/v1/agent-memory/mem/query', {
      method: 'POST',
      headers: { authorization: `Bearer ${device_key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ agent_id: 'helper', q: 'Lisbon', k: 1, scope: ['self'] }),
    });
    expect(((await response.json()) as { hits: Array<{ text: string }> }).hits[0]?.text).toBe('the user lives in Lisbon');
    await infra.kernel.stop();
  });
});
