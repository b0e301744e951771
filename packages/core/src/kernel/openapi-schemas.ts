import { isDeepStrictEqual } from 'node:util';
import { z } from 'zod';

/** JSON Schema as a plain object. */
export type JsonSchema = Record<string, unknown>;

/**
 * `components.schemas` being filled: {@link add} stores a schema under a
 * name, hoisting its `$defs` (zod emits them for recursive and registered
 * schemas) into components of their own so every `$ref` resolves in the document.
 */
export class SchemaComponents {
  readonly schemas: Record<string, JsonSchema> = {};
  private readonly reserved = new Set<string>();

  /**
   * Converts `schema` (`input` for request bodies, `output` for responses)
   * and stores it as `name`.
   * @returns a `$ref` to the stored component.
   * @throws Error when `name` is already taken by a different schema.
   */
  add(name: string, schema: z.ZodType, io: 'input' | 'output'): { $ref: string } {
    const {
      $schema: _dialect,
      $defs,
      ...rest
    } = z.toJSONSchema(schema, { io, unrepresentable: 'any', target: 'draft-2020-12' }) as JsonSchema & {
      $defs?: Record<string, JsonSchema>;
    };
    // zod names registered schemas by their id and the rest `__schema<n>`; the latter get names of their own.
    const renames = new Map<string, string>();
    for (const defName of Object.keys($defs ?? {})) {
      renames.set(`#/$defs/${defName}`, defName.startsWith('__') ? this.freeName(`${name}Part`) : defName);
    }
    for (const [defName, def] of Object.entries($defs ?? {})) {
      this.put(renames.get(`#/$defs/${defName}`)!, rewriteRefs(def, renames) as JsonSchema);
    }
    this.put(name, rewriteRefs(rest, renames) as JsonSchema);
    return { $ref: `#/components/schemas/${name}` };
  }

  /** Stores a ready JSON Schema as `name`. */
  put(name: string, schema: JsonSchema): void {
    const existing = this.schemas[name];
    if (existing !== undefined && !isDeepStrictEqual(existing, schema)) {
      throw new Error(`OpenAPI: two different schemas are both named ${name}.`);
    }
    this.schemas[name] = schema;
  }

  private freeName(base: string): string {
    let n = 1;
    while (this.reserved.has(`${base}${n}`) || `${base}${n}` in this.schemas) n++;
    this.reserved.add(`${base}${n}`);
    return `${base}${n}`;
  }
}

function rewriteRefs(value: unknown, renames: ReadonlyMap<string, string>): unknown {
  if (Array.isArray(value)) return value.map((item) => rewriteRefs(item, renames));
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, inner]) => [
      key,
      key === '$ref' && typeof inner === 'string' && renames.has(inner)
        ? `#/components/schemas/${renames.get(inner)}`
        : rewriteRefs(inner, renames),
    ]),
  );
}
