import { agentIdSchema } from '@agentinfra/core';
import { z } from 'zod';

/** Request of /say. */
export const sayRequestSchema = z.strictObject({ agent_id: agentIdSchema, text: z.string().min(1).max(1000) });
/** Response of /say. */
export const sayResponseSchema = z.object({ reply: z.string(), said: z.number().int() });
/** Request of /heard. */
export const heardRequestSchema = z.strictObject({ agent_id: agentIdSchema });
/** Response of /heard. */
export const heardResponseSchema = z.object({ said: z.number().int(), heard: z.number().int() });
