import { z } from 'zod';
import { headerRecord } from './header-record.js';
import { stringField } from './string-field.js';

/** Most headers one /ingest message may carry. */
const MAX_HEADERS = 200;
const headerNameSchema = stringField({ min: 1, max: 256 });
const headerValueSchema = stringField({ max: 65_536 });
/** The field as it travels (an object of header name → value), for its JSON Schema. */
const { $schema: _dialect, ...headerObjectJsonSchema } = z.toJSONSchema(z.record(headerNameSchema, headerValueSchema));

const isObject = (input: unknown): input is Record<string, unknown> => typeof input === 'object' && input !== null && !Array.isArray(input);
const typeOf = (input: unknown) => (input === null ? 'null' : Array.isArray(input) ? 'array' : typeof input);

/**
 * `/ingest`'s `headers`: an object of at most 200 header name → string
 * value in which every name is kept. A zod record skips a `__proto__` key
 * (assigning it would replace the prototype of the object it builds), so the
 * entries are checked as a Map (an issue's path is the header name) and
 * returned as a {@link headerRecord}. The JSON Schema is the record's.
 */
export const headersSchema = z
  .preprocess(
    (input) => (isObject(input) ? new Map(Object.entries(input)) : input),
    z
      .map(headerNameSchema, headerValueSchema, {
        error: (issue) => (issue.code === 'invalid_type' ? `Invalid input: expected record, received ${typeOf(issue.input)}` : undefined),
      })
      .refine((headers) => headers.size <= MAX_HEADERS, `at most ${MAX_HEADERS} headers`)
      .transform((headers) => headerRecord(headers)),
  )
  .meta(headerObjectJsonSchema);
