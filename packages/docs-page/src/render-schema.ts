import { escapeHtml, inlineMarkdown } from './html.js';
import { resolveSchema, type SchemaObject } from './openapi-document.js';

interface FieldRow {
  name: string;
  required: boolean;
  type: string;
  notes: string[];
}

const asSchemas = (value: unknown): SchemaObject[] => (Array.isArray(value) ? (value as SchemaObject[]) : []);

/** A short type label: `string (date-time)`, `array of string`, `integer | null`, `any JSON`. */
function typeLabel(raw: SchemaObject, schemas: Record<string, SchemaObject>): string {
  const schema = resolveSchema(raw, schemas);
  if ('const' in schema) return JSON.stringify(schema.const);
  const options = asSchemas(schema.anyOf ?? schema.oneOf);
  if (options.length > 0) return [...new Set(options.map((option) => typeLabel(option, schemas)))].join(' | ');
  const types = Array.isArray(schema.type) ? (schema.type as string[]) : typeof schema.type === 'string' ? [schema.type] : [];
  if (types.length === 0) return 'any JSON';
  return types
    .map((type) => {
      if (type === 'array') return `array of ${typeLabel((schema.items ?? {}) as SchemaObject, schemas)}`;
      if (type === 'object' && schema.properties === undefined && typeof schema.additionalProperties === 'object') {
        return `map of ${typeLabel(schema.additionalProperties as SchemaObject, schemas)}`;
      }
      return typeof schema.format === 'string' ? `${type} (${schema.format})` : type;
    })
    .join(' | ');
}

/**
 * Whether the field's description already states its default (`default 3`,
 * `default ["self"]`, `"once" (default)`): it says "default" and the value.
 */
function statesDefault(schema: SchemaObject): boolean {
  const { description } = schema;
  if (typeof description !== 'string' || !/\bdefault\b/i.test(description)) return false;
  const value = typeof schema.default === 'string' ? schema.default : JSON.stringify(schema.default);
  if (value === undefined) return false;
  const escaped = value.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  // `default 3` states 3, not 30 nor 3.5.
  return new RegExp(`(?<![\\w.])${escaped}(?!\\w|\\.\\d)`).test(description);
}

/** Constraints and description of one field, as HTML fragments. */
function notesOf(raw: SchemaObject, schemas: Record<string, SchemaObject>): string[] {
  const schema = resolveSchema(raw, schemas);
  const notes: string[] = [];
  if (typeof schema.description === 'string') notes.push(inlineMarkdown(schema.description));
  if (Array.isArray(schema.enum))
    notes.push(`One of ${schema.enum.map((value) => `<code>${escapeHtml(JSON.stringify(value))}</code>`).join(', ')}.`);
  if ('default' in schema && !statesDefault(schema)) notes.push(`Default <code>${escapeHtml(JSON.stringify(schema.default))}</code>.`);
  const bounds: Array<[string, string]> = [
    ['minimum', 'min'],
    ['maximum', 'max'],
    ['minLength', 'min length'],
    ['maxLength', 'max length'],
    ['minItems', 'min items'],
    ['maxItems', 'max items'],
  ];
  const limits = bounds.filter(([key]) => typeof schema[key] === 'number').map(([key, label]) => `${label} ${schema[key]}`);
  const limitText = limits.join(', ');
  if (limitText) notes.push(`${limitText[0]!.toUpperCase()}${limitText.slice(1)}.`);
  if (typeof schema.pattern === 'string' && schema.format === undefined && schema.pattern.length <= 80) {
    notes.push(`Pattern <code>${escapeHtml(schema.pattern)}</code>.`);
  }
  return notes;
}

/** The object schema nested in `schema` (itself, or the items of an array of objects), if any. */
function nestedObject(raw: SchemaObject, schemas: Record<string, SchemaObject>): { schema: SchemaObject; suffix: string } | undefined {
  const schema = resolveSchema(raw, schemas);
  if (schema.properties !== undefined) return { schema, suffix: '.' };
  const items = schema.items === undefined ? undefined : resolveSchema(schema.items as SchemaObject, schemas);
  if (items?.properties !== undefined) return { schema: items, suffix: '[].' };
  const options = asSchemas(schema.anyOf ?? schema.oneOf).map((option) => nestedObject(option, schemas));
  return options.find((option) => option !== undefined);
}

function collectRows(
  schema: SchemaObject,
  schemas: Record<string, SchemaObject>,
  prefix: string,
  seen: ReadonlySet<SchemaObject>,
): FieldRow[] {
  const properties = (schema.properties ?? {}) as Record<string, SchemaObject>;
  const required = new Set(Array.isArray(schema.required) ? (schema.required as string[]) : []);
  return Object.entries(properties).flatMap(([key, property]) => {
    const name = `${prefix}${key}`;
    const row: FieldRow = { name, required: required.has(key), type: typeLabel(property, schemas), notes: notesOf(property, schemas) };
    const nested = nestedObject(property, schemas);
    if (!nested || seen.has(nested.schema)) return [row];
    return [row, ...collectRows(nested.schema, schemas, `${name}${nested.suffix}`, new Set([...seen, nested.schema]))];
  });
}

/**
 * A body schema as an HTML table of its fields, nested objects flattened to
 * dotted names (`hits[].id`), each with its type, whether it is required,
 * its description and constraints.
 */
export function renderFields(raw: SchemaObject, schemas: Record<string, SchemaObject>): string {
  const schema = resolveSchema(raw, schemas);
  const rows = collectRows(schema, schemas, '', new Set([schema]));
  if (rows.length === 0)
    return `<p class="muted">${schema.properties ? 'An empty object <code>{}</code>.' : escapeHtml(typeLabel(schema, schemas))}</p>`;
  const body = rows
    .map(
      (row) =>
        `<tr><td><code>${escapeHtml(row.name)}</code>${row.required ? ' <span class="req">required</span>' : ''}</td>` +
        `<td>${escapeHtml(row.type)}</td><td>${row.notes.join(' ')}</td></tr>`,
    )
    .join('\n');
  return `<table class="fields"><thead><tr><th scope="col">Field</th><th scope="col">Type</th><th scope="col">Description</th></tr></thead>\n<tbody>\n${body}\n</tbody></table>`;
}
