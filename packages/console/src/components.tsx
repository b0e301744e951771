import type { Child } from 'hono/jsx';

/** A POST form to a console action with the session's CSRF token; `confirm` asks before submitting (console.js). */
export function ActionForm(props: {
  action: string;
  csrf: string;
  label: string;
  fields?: Record<string, string>;
  confirm?: string;
  danger?: boolean;
  /** Accessible name when the visible label is not unique on the page. */
  ariaLabel?: string;
}) {
  return (
    <form method="post" action={props.action} class="inline" data-confirm={props.confirm}>
      <input type="hidden" name="_csrf" value={props.csrf} />
      {Object.entries(props.fields ?? {}).map(([name, value]) => (
        <input type="hidden" name={name} value={value} />
      ))}
      <button type="submit" class={props.danger ? 'danger' : undefined} aria-label={props.ariaLabel}>
        {props.label}
      </button>
    </form>
  );
}

/** A table inside a horizontally scrolling box (narrow screens), with a caption. */
export function Table(props: { caption: string; head: readonly string[]; empty: string; rows: Child[]; count: number }) {
  if (props.count === 0) return <p class="empty">{props.empty}</p>;
  return (
    <section class="table-wrap" aria-label={props.caption} tabindex={0}>
      <table>
        <caption>{props.caption}</caption>
        <thead>
          <tr>
            {props.head.map((name) => (
              <th scope="col">{name}</th>
            ))}
          </tr>
        </thead>
        <tbody>{props.rows}</tbody>
      </table>
    </section>
  );
}

/**
 * A "Next page" link when the API returned a cursor, keeping the current
 * filters and the other tables' pages (`params`). A page with several paged
 * tables gives each its own cursor parameter (`name`, default `cursor`) and
 * label, e.g. "Next page of jobs", so paging one table leaves the others
 * where they are; `fragment` is the id of the table's heading to land on.
 * Past the first page (the table's cursor is set in `params`) it also links
 * back to the first page ("First page of jobs", or `first`).
 */
export function Pager(props: {
  path: string;
  params: Record<string, string | null | undefined>;
  next: string | null;
  name?: string;
  label?: string;
  first?: string;
  fragment?: string;
}) {
  const name = props.name ?? 'cursor';
  const label = props.label ?? 'Next page';
  const paged = Boolean(props.params[name]);
  if (!props.next && !paged) return null;
  const href = (cursor: string | null) => {
    const query = new URLSearchParams();
    for (const [param, value] of Object.entries(props.params)) if (value && param !== name) query.set(param, value);
    if (cursor) query.set(name, cursor);
    const search = query.toString();
    return `${props.path}${search ? `?${search}` : ''}${props.fragment ? `#${props.fragment}` : ''}`;
  };
  return (
    <p class="pager">
      {props.next ? <a href={href(props.next)}>{label}</a> : null}
      {props.next && paged ? ' · ' : null}
      {paged ? <a href={href(null)}>{props.first ?? label.replace(/^Next page/, 'First page')}</a> : null}
    </p>
  );
}

/** The non-empty ones of `params`, e.g. the current pages to keep in an action form and return to after it. */
export function present(params: Record<string, string | null | undefined>): Record<string, string> {
  return Object.fromEntries(Object.entries(params).filter((entry): entry is [string, string] => Boolean(entry[1])));
}

/** A definition list of counts. */
export function Stats(props: { items: ReadonlyArray<readonly [string, Child]> }) {
  return (
    <dl class="stats">
      {props.items.map(([name, value]) => (
        <div>
          <dt>{name}</dt>
          <dd>{value}</dd>
        </div>
      ))}
    </dl>
  );
}

/** An ISO instant as a short UTC string, or a dash. */
export function when(value: string | null | undefined): string {
  return value ? value.replace('T', ' ').replace(/\.\d+Z$|Z$/, ' UTC') : '—';
}
