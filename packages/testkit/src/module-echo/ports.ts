import { createPortRef } from '@agentinfra/core';

/** What agent-echo requires from another module: a greeting for an agent. */
export interface Greeter {
  greet(options: { agentId: string }): string;
}

/** Required by agent-echo; provided by whichever loaded module greets. */
export const greeterPort = createPortRef<Greeter>({ id: 'echo.greeter', description: 'greets an agent by id' });

/** What agent-echo provides to other modules: how many messages an agent said. */
export interface EchoLog {
  count(options: { agentId: string }): Promise<number>;
}

/** Provided by agent-echo from its service. */
export const echoLogPort = createPortRef<EchoLog>({ id: 'echo.log', description: 'counts what agents said to agent-echo' });
