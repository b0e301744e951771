import { describe, expectTypeOf, it } from 'vitest';
import type { AgentInfraClient, Routes } from './index.js';

describe('types from the route declarations', () => {
  it('types bodies and responses by route, and rejects wrong ones at compile time', () => {
    expectTypeOf<AgentInfraClient['memory']['query']>().returns.resolves.toEqualTypeOf<Routes['agent-memory/mem/query']['response']>();
    expectTypeOf<Routes['agent-memory/mem/write']['request']['kind']>().toEqualTypeOf<'episode' | 'semantic' | 'kv'>();
    expectTypeOf<Routes['agent-artifacts/commit']['response']['status']>().toEqualTypeOf<'committed'>();
    expectTypeOf<AgentInfraClient['invoke']>().parameter(0).toEqualTypeOf<keyof Routes>();
    const misuse = (client: AgentInfraClient) => {
      // @ts-expect-error an unknown kind
      void client.memory.write({ agent_id: 'a', kind: 'diary', text: 'x', provenance: 'p', scope: ['self'] });
      // @ts-expect-error an unknown route
      void client.invoke('agent-memory/mem/nope', {});
      // @ts-expect-error /secrets/get needs a key
      void client.identity.secrets.get({ agent_id: 'a' });
      // @ts-expect-error /mem/query answers hits, not results
      void client.memory.query({ agent_id: 'a', q: 'x', scope: ['self'] }).then((answer) => answer.results);
    };
    expectTypeOf(misuse).toBeFunction();
  });
});
