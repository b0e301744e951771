/** The JSON Schema (draft 2020-12) keywords zod's `toJSONSchema` emits that shape a TypeScript type. */
export interface JsonSchema {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean | JsonSchema;
  items?: JsonSchema;
  prefixItems?: JsonSchema[];
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  allOf?: JsonSchema[];
  enum?: unknown[];
  const?: unknown;
  description?: string;
  $ref?: string;
  $defs?: Record<string, JsonSchema>;
}

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

function propertyKey(name: string): string {
  return IDENTIFIER.test(name) ? name : JSON.stringify(name);
}

function docComment(text: string | undefined, indent: string): string {
  if (!text) return '';
  return `${indent}/** ${text.replace(/\*\//g, '*\\/').replace(/\s*\n\s*/g, ' ')} */\n`;
}

function union(parts: string[]): string {
  const unique = [...new Set(parts)];
  if (unique.includes('unknown')) return 'unknown';
  return unique.length === 1 ? (unique[0] as string) : unique.map((part) => (part.includes('=>') ? `(${part})` : part)).join(' | ');
}

function typeOfKeyword(type: string, schema: JsonSchema, indent: string): string {
  switch (type) {
    case 'string':
      return 'string';
    case 'number':
    case 'integer':
      return 'number';
    case 'boolean':
      return 'boolean';
    case 'null':
      return 'null';
    case 'array':
      if (schema.prefixItems) return `[${schema.prefixItems.map((item) => jsonSchemaType(item, indent)).join(', ')}]`;
      return `Array<${schema.items ? jsonSchemaType(schema.items, indent) : 'unknown'}>`;
    case 'object':
      return objectType(schema, indent);
    default:
      return 'unknown';
  }
}

function objectType(schema: JsonSchema, indent: string): string {
  const inner = `${indent}  `;
  const required = new Set(schema.required ?? []);
  const lines = Object.entries(schema.properties ?? {}).map(
    ([name, property]) =>
      `${docComment(property.description, inner)}${inner}${propertyKey(name)}${required.has(name) ? '' : '?'}: ${jsonSchemaType(property, inner)};\n`,
  );
  const extra = schema.additionalProperties;
  if (extra !== undefined && extra !== false)
    lines.push(`${inner}[key: string]: ${extra === true ? 'unknown' : jsonSchemaType(extra, inner)};\n`);
  if (lines.length === 0) return extra === false ? 'Record<string, never>' : 'Record<string, unknown>';
  return `{\n${lines.join('')}${indent}}`;
}

/**
 * The TypeScript type text of a JSON Schema as zod 4's `toJSONSchema` emits
 * it (draft 2020-12): objects with `required` and `additionalProperties`,
 * arrays and tuples, `anyOf`/`oneOf` as unions, `enum`/`const` as literal
 * types; what it cannot represent (`$ref`, `{}`) becomes `unknown`.
 * Validation keywords (lengths, patterns, bounds) are not types and are left
 * to the server, which answers 400 when they fail.
 * @param indent the indentation of the line the type starts on.
 */
export function jsonSchemaType(schema: JsonSchema, indent = ''): string {
  if (schema.const !== undefined) return JSON.stringify(schema.const);
  if (schema.enum) return union(schema.enum.map((value) => JSON.stringify(value)));
  const options = schema.anyOf ?? schema.oneOf;
  if (options) return union(options.map((option) => jsonSchemaType(option, indent)));
  if (schema.allOf) return schema.allOf.map((part) => jsonSchemaType(part, indent)).join(' & ');
  if (schema.type === undefined) return 'unknown';
  const types = Array.isArray(schema.type) ? schema.type : [schema.type];
  return union(types.map((type) => typeOfKeyword(type, schema, indent)));
}
