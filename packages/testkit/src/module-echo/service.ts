import type { ModuleDeps } from '@agentinfra/core';
import type { z } from 'zod';
import { greeterPort } from './ports.js';
import type { heardRequestSchema, sayRequestSchema } from './schemas.js';

/** agent-echo's HTTP-free service: stores what an agent says and answers with the greeter's greeting. */
export function createEchoService(deps: ModuleDeps<'sql' | 'clock', undefined>) {
  const knex = () => deps.sql.knex;
  const count = async (agentId: string, where: 'all' | 'heard') => {
    const query = knex()('echo_messages').where({ agent_id: agentId });
    if (where === 'heard') query.whereNotNull('heard_at');
    const row = (await query.count({ n: '*' }).first()) as { n: number | string };
    return Number(row.n);
  };
  return {
    /** Stores `text` and answers `<greeting>: <text>` with how many messages the agent said so far. */
    async say(body: z.output<typeof sayRequestSchema>) {
      await knex()('echo_messages').insert({ agent_id: body.agent_id, text: body.text });
      return { reply: `${deps.use(greeterPort).greet({ agentId: body.agent_id })}: ${body.text}`, said: await count(body.agent_id, 'all') };
    },
    /** How many messages the agent said, and how many the `echo.hear` job has marked heard. */
    async heard(body: z.output<typeof heardRequestSchema>) {
      return { said: await count(body.agent_id, 'all'), heard: await count(body.agent_id, 'heard') };
    },
    /** Marks every unheard message heard (the job's work). */
    async hear() {
      await knex()('echo_messages').whereNull('heard_at').update({ heard_at: deps.clock.now() });
    },
    count: (agentId: string) => count(agentId, 'all'),
  };
}

/** The service type routes and jobs see. */
export type EchoService = ReturnType<typeof createEchoService>;
