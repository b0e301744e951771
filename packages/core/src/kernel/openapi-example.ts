import type { JsonSchema } from './openapi-schemas.js';

const FAR_FUTURE = '2030-01-01T00:00:00.000Z';

/** Strings tried, in order, for a string field with a pattern or length bounds. */
const CANDIDATES = [
  'alice',
  'notes.txt',
  'text/plain',
  'memory.read',
  'self',
  'art_01JZ8X2K4M',
  'ops',
  'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
  'xTIaB8pQZ6l1qVuXhJm0RgK7dC3sEwNfYo5tLr2vU9A=',
  FAR_FUTURE,
  'example',
];

/** Values for field names whose rules JSON Schema cannot express (host names, addresses). */
const BY_NAME: Record<string, string> = {
  to_agent: 'bob',
  q: 'What does the user prefer for status reports?',
  text: 'The user prefers short status reports on Mondays.',
  display_name: 'Alice',
  subject: 'Weekly status',
  b: 'bob',
  url: 'https://agent.example.com/hook',
  host: 'alice.agents.example.com',
  endpoint: '203.0.113.7:51820',
  ips: '203.0.113.7',
};

function fits(value: string, schema: JsonSchema): boolean {
  if (typeof schema.minLength === 'number' && value.length < schema.minLength) return false;
  if (typeof schema.maxLength === 'number' && value.length > schema.maxLength) return false;
  return typeof schema.pattern !== 'string' || new RegExp(schema.pattern, 'u').test(value);
}

function sampleString(schema: JsonSchema, name: string): string | undefined {
  const byFormat: Record<string, string> = {
    'date-time': FAR_FUTURE,
    email: 'alice@example.com',
    uri: 'https://agent.example.com/hook',
    url: 'https://agent.example.com/hook',
    uuid: '0b6f1c2e-5d4a-4f3b-9c8e-7a6d5e4f3a2b',
  };
  const format = typeof schema.format === 'string' ? byFormat[schema.format] : undefined;
  return [format, BY_NAME[name], ...CANDIDATES].find((value): value is string => value !== undefined && fits(value, schema));
}

function sampleNumber(schema: JsonSchema): number {
  const { minimum, exclusiveMinimum, maximum } = schema as { minimum?: number; exclusiveMinimum?: number; maximum?: number };
  const low = minimum ?? (exclusiveMinimum === undefined ? 1 : exclusiveMinimum + 1);
  return Math.min(Math.max(low, 1), maximum ?? Number.POSITIVE_INFINITY);
}

/**
 * A small value that should satisfy `schema`: required properties only,
 * the first enum or option, strings from a list of plausible values that
 * match the pattern. The caller checks the result with the real schema.
 * @returns `undefined` when no value was found (an unsatisfiable pattern).
 */
export function sampleOf(schema: JsonSchema, components: Record<string, JsonSchema>, name = '', depth = 0): unknown {
  if (typeof schema.$ref === 'string') {
    // A recursive schema is followed twice at most.
    const target = depth < 2 ? components[schema.$ref.slice('#/components/schemas/'.length)] : undefined;
    return target && sampleOf(target, components, name, depth + 1);
  }
  if ('const' in schema) return schema.const;
  if (Array.isArray(schema.enum)) return schema.enum[0];
  if (Array.isArray(schema.examples) && schema.examples.length > 0) return schema.examples[0];
  if ('default' in schema) return schema.default;
  const options = (schema.anyOf ?? schema.oneOf ?? schema.allOf) as JsonSchema[] | undefined;
  if (options) return options.map((option) => sampleOf(option, components, name, depth)).find((value) => value !== undefined);
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  switch (type) {
    case 'string':
      return sampleString(schema, name);
    case 'integer':
    case 'number':
      return sampleNumber(schema);
    case 'boolean':
      return true;
    case 'null':
      return null;
    case 'array': {
      const item = sampleOf((schema.items ?? {}) as JsonSchema, components, name, depth);
      if (item !== undefined) return [item];
      return typeof schema.minItems === 'number' && schema.minItems > 0 ? undefined : [];
    }
    case 'object': {
      const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
      const entries = ((schema.required ?? []) as string[]).map((key) => [key, sampleOf(properties[key] ?? {}, components, key, depth)]);
      return entries.some(([, value]) => value === undefined) ? undefined : Object.fromEntries(entries);
    }
    default:
      return { note: 'any JSON value' };
  }
}
