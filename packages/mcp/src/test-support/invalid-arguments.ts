import type { SqlDatabase } from '@agentinfra/core';

type Knex = SqlDatabase['knex'];

type JsonSchema = { type?: string | string[]; enum?: unknown[]; anyOf?: JsonSchema[]; properties?: Record<string, JsonSchema> };

/** A value of the wrong type for `schema`, or `undefined` when the schema accepts anything. */
function wrongValue(schema: JsonSchema): unknown {
  const types = schema.anyOf ? schema.anyOf.flatMap((option) => option.type ?? []) : [schema.type ?? []].flat();
  if (types.length === 0 && !schema.enum) return undefined;
  if (!types.includes('object')) return { not: 'this' };
  if (!types.includes('number') && !types.includes('integer')) return 12345;
  return undefined;
}

/**
 * Arguments that break a tool's input schema, generated from the schema: every
 * property gets a value of another type (an object where a string, number,
 * array or boolean belongs; a number where an object belongs), and an
 * unknown property is added, which the strict request schemas refuse.
 */
export function invalidArgumentsFor(inputSchema: { properties?: Record<string, object> }): Record<string, unknown> {
  const args: Record<string, unknown> = { not_a_field: true };
  for (const [name, schema] of Object.entries(inputSchema.properties ?? {})) {
    const value = wrongValue(schema as JsonSchema);
    if (value !== undefined) args[name] = value;
  }
  return args;
}

/**
 * The row count of every table of the current database or schema, except
 * migration bookkeeping, the job runner's queue (background jobs write it)
 * and the audit log (it records refused attempts on audited routes too).
 */
export async function tableCounts(knex: Knex): Promise<Record<string, number>> {
  const client = String(knex.client.config.client);
  const names: string[] = client.includes('sqlite')
    ? ((await knex.raw("select name from sqlite_master where type = 'table' and name not like 'sqlite_%'")) as Array<{ name: string }>).map(
        (row) => row.name,
      )
    : (
        (await knex.raw('select table_name as name from information_schema.tables where table_schema = current_schema()')) as {
          rows: Array<{ name: string }>;
        }
      ).rows.map((row) => row.name);
  const counts: Record<string, number> = {};
  for (const name of names.sort()) {
    if (name.includes('migrations') || name.startsWith('core_jobs') || name.startsWith('core_audit')) continue;
    const row = (await knex(name).count({ n: '*' }).first()) as { n: number | string };
    counts[name] = Number(row.n);
  }
  return counts;
}
