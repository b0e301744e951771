/** A value that is an object (not `null`), whose own keys can be read. */
function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}

/**
 * The parsed params of `tools/call` with the own `__proto__` key of the raw
 * `arguments` put back. The SDK's request schema parses `arguments` as a zod
 * record, which drops that key without an issue (assigning it would set the
 * prototype of the object it builds), so no tool schema would see it and a
 * call the HTTP API refuses would run. Put back as an own property, it is
 * sent on to the route, whose strict schema refuses it like any unknown field
 * (`invalid_request`, `__proto__: Unknown field.`), as `artifacts_upload`'s
 * does. Other keys, `constructor` and `prototype` among them, the record keeps.
 * @param raw the params as the client sent them (JSON, so `__proto__` is an own key).
 * @param parsed the same params as the request schema parsed them.
 */
export function withProtoArgument<P>(raw: unknown, parsed: P): P {
  const sent = isObject(raw) ? raw.arguments : undefined;
  const kept = isObject(parsed) ? parsed.arguments : undefined;
  if (!isObject(sent) || !isObject(kept) || !Object.hasOwn(sent, '__proto__')) return parsed;
  const { value } = Object.getOwnPropertyDescriptor(sent, '__proto__')!;
  Object.defineProperty(kept, '__proto__', { value, enumerable: true, writable: true, configurable: true });
  return parsed;
}
