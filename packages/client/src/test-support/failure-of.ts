import { AgentInfraError } from '../errors.js';

/** The error a call rejects with; fails the test when it resolves or rejects with anything but an AgentInfraError. */
export async function failureOf(call: Promise<unknown>): Promise<AgentInfraError> {
  const outcome = await call.then(
    (value) => new Error(`expected a failure, got ${JSON.stringify(value)}`),
    (error: unknown) => error,
  );
  if (!(outcome instanceof AgentInfraError)) throw outcome;
  return outcome;
}
