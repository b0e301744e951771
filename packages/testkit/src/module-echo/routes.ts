import { routesFor } from '@agentinfra/core';
import type { EchoPermission } from './permissions.js';
import { heardRequestSchema, heardResponseSchema, sayRequestSchema, sayResponseSchema } from './schemas.js';
import type { EchoService } from './service.js';

const route = routesFor<EchoService, EchoPermission>();

/** agent-echo's two routes. */
export const echoRoutes = [
  route({
    path: '/say',
    summary: 'Say something; the answer greets the agent.',
    description: 'Stores the text for the agent and answers with a greeting from the greeter port and the count so far.',
    example: { agent_id: 'alice', text: 'hello' },
    effects: { idempotent: false },
    request: sayRequestSchema,
    response: sayResponseSchema,
    auth: { kind: 'agent', permission: 'echo.say', agents: (body) => [body.agent_id] },
    handler: ({ body, service }) => service.say(body),
  }),
  route({
    path: '/heard',
    summary: 'How many messages the agent said and how many the job has heard.',
    example: { agent_id: 'alice' },
    effects: { readOnly: true, idempotent: true },
    request: heardRequestSchema,
    response: heardResponseSchema,
    auth: { kind: 'bridge' },
    handler: ({ body, service }) => service.heard(body),
  }),
];
