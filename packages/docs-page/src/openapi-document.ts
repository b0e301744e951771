/** A JSON Schema object as it appears in the OpenAPI document. */
export type SchemaObject = Record<string, unknown>;

/** The parts of an OpenAPI operation the docs page shows. */
export interface OperationObject {
  operationId: string;
  summary?: string;
  description?: string;
  tags?: string[];
  security?: Array<Record<string, string[]>>;
  requestBody?: { content: Record<string, { schema?: SchemaObject; example?: unknown }> };
  responses: Record<string, { $ref?: string; description?: string; content?: Record<string, { schema?: SchemaObject }> }>;
}

/** The parts of an OpenAPI 3.1 document (as `buildOpenApiDocument` makes it) the docs page reads. */
export interface OpenApiDocument {
  info: { title: string; version: string; description?: string };
  tags?: Array<{ name: string; description?: string }>;
  paths: Record<string, Record<string, OperationObject>>;
  components?: {
    schemas?: Record<string, SchemaObject>;
    responses?: Record<string, { description: string; content?: Record<string, { example?: unknown }> }>;
    securitySchemes?: Record<string, { description?: string }>;
  };
}

/** The schema a local `$ref` (`#/components/schemas/<name>`) points at, or the schema itself. */
export function resolveSchema(schema: SchemaObject, schemas: Record<string, SchemaObject>): SchemaObject {
  const ref = schema.$ref;
  if (typeof ref !== 'string') return schema;
  return schemas[ref.slice(ref.lastIndexOf('/') + 1)] ?? {};
}
