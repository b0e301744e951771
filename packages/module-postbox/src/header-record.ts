/**
 * An object of header name → value without a prototype, filled from
 * `entries` (a later entry with the same name replaces an earlier one).
 * Every name is an own property: `__proto__`, `constructor` or `toString`
 * are headers like any other, never the prototype or its members, and
 * `name in record` tells only whether that header is present.
 */
export function headerRecord(entries: Iterable<readonly [string, string]> = []): Record<string, string> {
  const record: Record<string, string> = Object.create(null);
  for (const [name, value] of entries) record[name] = value;
  return record;
}
