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

/** A "Next page" link when the API returned a cursor, keeping the current filters. */
export function Pager(props: { path: string; params: Record<string, string | undefined>; next: string | null }) {
  if (!props.next) return null;
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(props.params)) if (value) query.set(name, value);
  query.set('cursor', props.next);
  return (
    <p class="pager">
      <a href={`${props.path}?${query.toString()}`}>Next page</a>
    </p>
  );
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
