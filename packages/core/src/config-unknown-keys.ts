import type { z } from 'zod';

/** The parts of zod's internal definition that the key walk reads (zod 4 `schema.def`). */
interface SchemaDef {
  type: string;
  shape?: Record<string, z.ZodType>;
  innerType?: z.ZodType;
  in?: z.ZodType;
  options?: readonly z.ZodType[];
  discriminator?: string;
}

const defOf = (schema: z.ZodType) => (schema as unknown as { def: SchemaDef }).def;
const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * The object schemas a value may be checked against: `schema` itself,
 * unwrapped from defaults, optionals, nullables and pipes, or the options of
 * a union (for a discriminated union, the option the discriminator of
 * `value` names, else every option). Empty when keys are free (records,
 * anything else).
 * @param value the effective value (file and environment merged), which picks the union option.
 */
function objectShapes(schema: z.ZodType, value: Record<string, unknown> | undefined): Array<Record<string, z.ZodType>> {
  const def = defOf(schema);
  switch (def.type) {
    case 'object':
      return def.shape ? [def.shape] : [];
    case 'default':
    case 'prefault':
    case 'optional':
    case 'nullable':
    case 'readonly':
      return def.innerType ? objectShapes(def.innerType, value) : [];
    case 'pipe':
      return def.in ? objectShapes(def.in, value) : [];
    case 'union': {
      const options = def.options ?? [];
      const shapes = options.flatMap((option) => objectShapes(option, value));
      const key = def.discriminator;
      if (key === undefined) return shapes;
      const chosen = value === undefined ? [] : shapes.filter((shape) => shape[key]?.safeParse(value[key]).success === true);
      return chosen.length > 0 ? chosen : shapes;
    }
    default:
      return [];
  }
}

/**
 * Dotted paths of the keys of `value` that `schema` does not declare, at any
 * depth (a config file's typo such as `http.rateLimitPerMinut`). Objects
 * whose keys are free (records) are not looked into; for a union, a key is
 * unknown when no candidate option declares it.
 * @param value the config file's value at this place (only its keys are reported).
 * @param options.merged the effective value here, the environment included: a discriminated union's
 *   option is the one it names (`AGENTINFRA_EMBEDDER=openai` over a file saying `wordvec`); default `value`.
 * @param options.extra top-level keys accepted besides the schema's (module sections).
 * @returns the paths, in the order met, prefixed with `prefix`.
 */
export function unknownConfigKeys(
  schema: z.ZodType,
  value: unknown,
  options: { prefix?: readonly string[]; extra?: readonly string[]; merged?: unknown } = {},
): string[] {
  if (!isPlainObject(value)) return [];
  const merged = options.merged === undefined ? value : options.merged;
  const shapes = objectShapes(schema, isPlainObject(merged) ? merged : undefined);
  if (shapes.length === 0) return [];
  const prefix = options.prefix ?? [];
  const found: string[] = [];
  for (const [key, child] of Object.entries(value)) {
    if (options.extra?.includes(key)) continue;
    const declared = shapes.find((shape) => Object.hasOwn(shape, key))?.[key];
    if (declared === undefined) found.push([...prefix, key].join('.'));
    else {
      const mergedChild = isPlainObject(merged) ? merged[key] : undefined;
      found.push(...unknownConfigKeys(declared, child, { prefix: [...prefix, key], merged: mergedChild ?? child }));
    }
  }
  return found;
}
