import type { VectorAttach, VectorInsert } from '../ports/vector-index.js';

/** A plain SQL identifier, safe to quote with double quotes on SQLite and PostgreSQL. */
const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;

/**
 * Checks that `name` is a plain SQL identifier (`[A-Za-z_][A-Za-z0-9_]*`, at most 63 characters).
 * @returns `name` in double quotes.
 * @throws RangeError naming `what` otherwise.
 */
export function quoteIdentifier(name: string, what: string): string {
  if (!IDENTIFIER.test(name))
    throw new RangeError(`${what} must be a plain SQL identifier of at most 63 characters, got ${JSON.stringify(name)}`);
  return `"${name}"`;
}

/**
 * The quoted table and columns of a {@link VectorInsert}: the keys of its
 * first row, which every other row must have too (no more, no fewer).
 * @returns `null` when there are no rows.
 * @throws RangeError for identifiers that are not plain, or rows with other keys.
 */
export function insertShape(insert: VectorInsert | undefined): { table: string; columns: string[]; names: string[] } | null {
  const first = insert?.rows[0];
  if (insert === undefined || first === undefined) return null;
  const names = Object.keys(first);
  if (names.length === 0) throw new RangeError('rows to insert need at least one column');
  for (const row of insert.rows) {
    const keys = Object.keys(row);
    if (keys.length !== names.length || names.some((name) => !Object.hasOwn(row, name))) {
      throw new RangeError(`every row inserted into ${insert.table} must have the columns ${names.join(', ')}`);
    }
  }
  return {
    table: quoteIdentifier(insert.table, 'insert table'),
    columns: names.map((name) => quoteIdentifier(name, 'insert column')),
    names,
  };
}

/** Prefix of the result-column aliases of attached columns (`attached.<column>`; the key itself is `attached.`). */
const ATTACHED = 'attached.';

/**
 * The SQL of a {@link VectorAttach}: `select` expressions that return the
 * attached row's key and columns under the aliases {@link attachedRow}
 * reads, and the `left join` of the attached table (alias `attached`) on
 * `idColumn`, the SQL expression of the hit's id (e.g. `i.id`).
 * @throws RangeError for identifiers that are not plain or an empty column list.
 */
export function attachSql(attach: VectorAttach, idColumn: string): { table: string; key: string; select: string[]; join: string } {
  if (attach.columns.length === 0) throw new RangeError('attach needs at least one column');
  const table = quoteIdentifier(attach.table, 'attach table');
  const key = quoteIdentifier(attach.key, 'attach key');
  const select = [
    `attached.${key} as "${ATTACHED}"`,
    ...attach.columns.map((column) => `attached.${quoteIdentifier(column, 'attach column')} as "${ATTACHED}${column}"`),
  ];
  return { table, key, select, join: `left join ${table} attached on attached.${key} = ${idColumn}` };
}

/**
 * The attached columns of a result row selected with {@link attachSql}, by
 * column name; `undefined` when the row carries no attachment or the attached
 * row does not exist (its key is NULL).
 */
export function attachedRow(row: Record<string, unknown>): Record<string, unknown> | undefined {
  const key = row[ATTACHED];
  if (key === undefined || key === null) return undefined;
  const attached: Record<string, unknown> = {};
  for (const [alias, value] of Object.entries(row)) {
    if (alias.startsWith(ATTACHED) && alias !== ATTACHED) attached[alias.slice(ATTACHED.length)] = value;
  }
  return attached;
}
