import { z } from 'zod';

/** A JSON Schema object as MCP carries it (`inputSchema`, `outputSchema`: always `type: "object"`). */
export type ObjectJsonSchema = { type: 'object'; properties?: Record<string, object>; required?: string[]; [key: string]: unknown };

/**
 * The JSON Schema (draft 2020-12, no `$schema` key) of a zod schema as a
 * request (`input`: defaults make fields optional) or a response (`output`).
 * Types zod cannot express in JSON Schema become `{}`.
 * @throws Error when the schema is not an object schema (MCP requires `type: "object"`).
 */
export function objectJsonSchema(schema: z.ZodType, io: 'input' | 'output'): ObjectJsonSchema {
  const { $schema: _ignored, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as Record<string, unknown>;
  if (rest.type !== 'object') throw new Error(`Expected an object schema, got ${JSON.stringify(rest.type)}.`);
  return rest as ObjectJsonSchema;
}

/** The field naming the acting agent; tools make it optional and fill it in from the credential. */
export const ACTING_AGENT_FIELD = 'agent_id';

/**
 * The tool input schema of a request schema: as {@link objectJsonSchema},
 * with `agent_id` optional (described as defaulting to the credential's agent).
 * @returns the schema and whether it has an `agent_id` to fill in.
 */
export function toolInputSchema(schema: z.ZodType): { schema: ObjectJsonSchema; actingAgent: boolean } {
  const json = objectJsonSchema(schema, 'input');
  const property = json.properties?.[ACTING_AGENT_FIELD];
  if (!property) return { schema: json, actingAgent: false };
  const properties = {
    ...json.properties,
    [ACTING_AGENT_FIELD]: {
      ...property,
      description:
        'The agent to act for. Leave it out to act for the agent of your credential; naming another agent is refused unless your credential acts for it.',
    },
  };
  const required = json.required?.filter((name) => name !== ACTING_AGENT_FIELD);
  return { schema: { ...json, properties, ...(required ? { required } : {}) }, actingAgent: true };
}
