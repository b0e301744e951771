import type { JsonSchema } from './openapi-schemas.js';

const DAY_MS = 86_400_000;
/**
 * How far ahead example instants (`expires_at`) are: a realistic delegation
 * or grant length, within every default bound (delegations: 365 days), and
 * still in the future while a server that built its document keeps running.
 */
const FUTURE_DAYS = 90;

/** Midnight UTC `days` days after (or before, if negative) `now`, as ISO 8601. */
function dayOffset(now: number, days: number): string {
  return new Date((Math.floor(now / DAY_MS) + days) * DAY_MS).toISOString();
}

/** The random part of every example id: 16 bytes in base64url, the shape `newId` gives. */
const ID_SUFFIX = '3q2ZP1kYfS5l0v8QnUu8Ww';

/** An example id with `prefix` (`art_`, `msg_`, …), shaped like the ones `newId` makes. */
function exampleId(prefix: string): string {
  return `${prefix}${ID_SUFFIX}`;
}

/**
 * The `newId` prefix (CONTRACT.md "Ids") of id fields whose schema names
 * none in a pattern, by field name. A field whose pattern starts with a
 * prefix (`^art_…`) gets an id with that prefix whatever its name.
 */
const ID_PREFIX_BY_NAME: Record<string, string> = {
  device_id: 'dev_',
  delegation_id: 'dlg_',
  artifact_id: 'art_',
  grant_id: 'grt_',
  message_id: 'msg_',
  webhook_id: 'whk_',
  webhook: 'whk_',
  job_id: 'job_',
  run_id: 'run_',
  host_id: 'hst_',
  memory_id: 'mem_',
  add_ids: 'mem_',
  remove_ids: 'mem_',
};

/**
 * Values for fields whose meaning JSON Schema cannot express (agents, ids,
 * addresses, cadences, URLs, secrets), by field name. The agent-naming
 * fields are the only ones that say `alice` (or `bob`): examples act as
 * agent `alice`, towards `bob`.
 */
const BY_NAME: Record<string, string> = {
  agent_id: 'alice',
  from_agent: 'alice',
  to_agent: 'bob',
  a: 'alice',
  b: 'bob',
  query: 'alice',
  local_part: 'alice',
  display_name: 'Alice',
  team: 'ops',
  q: 'What does the user prefer for status reports?',
  text: 'The user prefers short status reports on Mondays.',
  provenance: 'chat:2026-05-04',
  // A mailbox on the default mail domain (`postbox.mailDomain`: localhost), to a mailbox elsewhere.
  from: 'alice@localhost',
  to: 'bob@example.com',
  subject: 'Weekly status',
  body: 'Hi Bob,\n\nthe migration is done and the API docs are updated. Next week: the load tests.\n\nAlice',
  folder: 'newsletters',
  move_to: 'newsletters',
  cadence: '0 9 * * 1',
  timezone: 'Europe/Paris',
  // URLs that resolve to a public address, as callback and webhook targets must.
  url: 'https://example.com/hooks/agentinfra',
  callback_url: 'https://example.com/hooks/weekly-status',
  secret: 'whsec_g2Jdy31LPA32ns5epg7BQkSQh5YsG24jRIHWJIbhc+A=',
  grant_token: 'g_sxgQE9P8dllT1sd1QnDHR6qKoyr7LINdIo3ecY7Pu6k',
  sha256: 'c78cc36368a125f71d155b1d0077c19bcf1a26839acc784cc635c7d03bc6ea45',
  mime: 'text/markdown',
  value: 'ghp_example',
  host: 'alice.agents.example.com',
  endpoint: '203.0.113.7:51820',
  ips: '203.0.113.7',
};

/** Where one field name means different things in different modules, the module's value wins over {@link BY_NAME}. */
const BY_MODULE_NAME: Record<string, Record<string, string>> = {
  'agent-identity': { key: 'github_token', label: 'alice-laptop' },
  'agent-memory': { key: 'preferences/report-format', name: 'project-facts' },
  'agent-artifacts': { key: 'reports/2026-w19-status.md' },
  'agent-postbox': { name: 'newsletters', id: exampleId('msg_'), ids: exampleId('msg_') },
  'agent-scheduler': { name: 'weekly-status' },
};

/** Values for numbers whose name says more than their bounds. */
const NUMBER_BY_NAME: Record<string, number> = { size: 2048, port: 8080 };

/** Values for fields of any JSON type, by field name (`value` of a key-value entry). */
const JSON_BY_NAME: Record<string, unknown> = { value: { format: 'bullet points', day: 'Monday' } };

/** Strings tried, in order, for other string fields with a pattern or length bounds. */
const CANDIDATES = [
  'self',
  'memory.read',
  'text/plain',
  'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
  'xTIaB8pQZ6l1qVuXhJm0RgK7dC3sEwNfYo5tLr2vU9A=',
  'example',
];

/** Where an example is used. */
export interface SampleContext {
  /** The module whose route it is for, to pick {@link BY_MODULE_NAME} values. */
  module?: string;
  /** The instant example dates are relative to (default: now): `since` a week before, other instants 90 days after. */
  now?: number;
}

function fits(value: string, schema: JsonSchema): boolean {
  if (typeof schema.minLength === 'number' && value.length < schema.minLength) return false;
  if (typeof schema.maxLength === 'number' && value.length > schema.maxLength) return false;
  return typeof schema.pattern !== 'string' || new RegExp(schema.pattern, 'u').test(value);
}

/** `art_` for a pattern `^art_[A-Za-z0-9_-]+$`: the literal id prefix a pattern starts with, if any. */
function idPrefixOfPattern(pattern: unknown): string | undefined {
  return typeof pattern === 'string' ? /^\^([a-z]+_)/.exec(pattern)?.[1] : undefined;
}

function sampleString(schema: JsonSchema, name: string, context: SampleContext): string | undefined {
  const now = context.now ?? Date.now();
  const byFormat: Record<string, string> = {
    'date-time': dayOffset(now, name === 'since' ? -7 : FUTURE_DAYS),
    email: 'alice@localhost',
    uri: 'https://example.com/hooks/agentinfra',
    url: 'https://example.com/hooks/agentinfra',
    uuid: '0b6f1c2e-5d4a-4f3b-9c8e-7a6d5e4f3a2b',
  };
  const format = typeof schema.format === 'string' ? byFormat[schema.format] : undefined;
  const prefix = idPrefixOfPattern(schema.pattern) ?? ID_PREFIX_BY_NAME[name];
  const byModule = context.module === undefined ? undefined : BY_MODULE_NAME[context.module]?.[name];
  const named = [format, prefix && exampleId(prefix), byModule, BY_NAME[name]];
  // A free-form string of unknown meaning says so; a pattern picks the first candidate it accepts.
  const fallbacks = typeof schema.pattern === 'string' ? CANDIDATES : ['example', ...CANDIDATES];
  return [...named, ...fallbacks].find((value): value is string => typeof value === 'string' && fits(value, schema));
}

function sampleNumber(schema: JsonSchema, name: string): number {
  const { minimum, exclusiveMinimum, maximum } = schema as { minimum?: number; exclusiveMinimum?: number; maximum?: number };
  const low = minimum ?? (exclusiveMinimum === undefined ? 1 : exclusiveMinimum + 1);
  const named = NUMBER_BY_NAME[name];
  const high = maximum ?? Number.POSITIVE_INFINITY;
  if (named !== undefined && named >= low && named <= high) return named;
  return Math.min(Math.max(low, 1), high);
}

/**
 * A small value that should satisfy `schema`: required properties only,
 * the first enum or option, realistic values for known field names (agents,
 * ids with their `newId` prefix, addresses, cadences, URLs, secrets; see
 * {@link BY_NAME}), else strings from a list of plausible values that match
 * the pattern. The caller checks the result with the real schema.
 * @returns `undefined` when no value was found (an unsatisfiable pattern).
 */
export function sampleOf(
  schema: JsonSchema,
  components: Record<string, JsonSchema>,
  context: SampleContext = {},
  name = '',
  depth = 0,
): unknown {
  if (typeof schema.$ref === 'string') {
    // A recursive schema is followed twice at most.
    const target = depth < 2 ? components[schema.$ref.slice('#/components/schemas/'.length)] : undefined;
    return target && sampleOf(target, components, context, name, depth + 1);
  }
  if ('const' in schema) return schema.const;
  if (Array.isArray(schema.enum)) return schema.enum[0];
  if (Array.isArray(schema.examples) && schema.examples.length > 0) return schema.examples[0];
  if ('default' in schema) return schema.default;
  const options = (schema.anyOf ?? schema.oneOf ?? schema.allOf) as JsonSchema[] | undefined;
  if (options) return options.map((option) => sampleOf(option, components, context, name, depth)).find((value) => value !== undefined);
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  switch (type) {
    case 'string':
      return sampleString(schema, name, context);
    case 'integer':
    case 'number':
      return sampleNumber(schema, name);
    case 'boolean':
      return true;
    case 'null':
      return null;
    case 'array': {
      const item = sampleOf((schema.items ?? {}) as JsonSchema, components, context, name, depth);
      if (item !== undefined) return [item];
      return typeof schema.minItems === 'number' && schema.minItems > 0 ? undefined : [];
    }
    case 'object': {
      const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
      const entries = ((schema.required ?? []) as string[]).map((key) => [
        key,
        sampleOf(properties[key] ?? {}, components, context, key, depth),
      ]);
      return entries.some(([, value]) => value === undefined) ? undefined : Object.fromEntries(entries);
    }
    default:
      return JSON_BY_NAME[name] ?? { note: 'any JSON value' };
  }
}
