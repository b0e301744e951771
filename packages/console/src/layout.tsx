import type { Child } from 'hono/jsx';
import type { ConsoleSession } from './sessions.js';

/** The pages of the navigation, in order: link name and path under the console base. */
export const NAV = [
  ['Overview', '/'],
  ['Agents', '/agents'],
  ['Memory', '/memory'],
  ['Artifacts', '/artifacts'],
  ['Mesh', '/mesh'],
  ['Gateway', '/gateway'],
  ['Postbox', '/postbox'],
  ['Scheduler', '/scheduler'],
  ['Settings', '/settings'],
  ['Audit', '/audit'],
] as const;

/** A navigation name. */
export type NavName = (typeof NAV)[number][0];

/** What every page needs to render its frame. */
export interface PageFrame {
  base: string;
  session: ConsoleSession;
  /** The flash message taken from the session for this render. */
  flash?: ConsoleSession['flash'];
}

function Head(props: { base: string; title: string }) {
  return (
    <head>
      <meta charset="utf-8" />
      <meta name="viewport" content="width=device-width, initial-scale=1" />
      <title>{`${props.title} · agentinfra console`}</title>
      <link rel="stylesheet" href={`${props.base}/static/console.css`} />
      <script src={`${props.base}/static/console.js`} defer />
    </head>
  );
}

function Flash(props: { flash: PageFrame['flash'] }) {
  const { flash } = props;
  if (!flash) return null;
  if (flash.kind === 'secret') {
    return (
      <div class="flash ok" role="status">
        <p>{flash.text}</p>
        <p class="secret">
          <code id="secret-value">{flash.secret}</code>
          <button type="button" class="copy" data-copy="secret-value">
            Copy
          </button>
        </p>
      </div>
    );
  }
  return (
    <div class={`flash ${flash.kind}`} role={flash.kind === 'error' ? 'alert' : 'status'}>
      {flash.text}
    </div>
  );
}

/** A full console page: header with the navigation and Sign out, the flash message, then the content. */
export function Layout(props: { frame: PageFrame; title: NavName | string; current?: NavName; children?: Child }) {
  const { base, session } = props.frame;
  return (
    <html lang="en">
      <Head base={base} title={props.title} />
      <body>
        <header class="top">
          <a class="brand" href={`${base}/`}>
            agentinfra
          </a>
          <nav aria-label="Console">
            <ul>
              {NAV.map(([name, path]) => (
                <li>
                  <a href={`${base}${path}`} aria-current={props.current === name ? 'page' : undefined}>
                    {name}
                  </a>
                </li>
              ))}
            </ul>
          </nav>
          <form method="post" action={`${base}/logout`} class="signout">
            <input type="hidden" name="_csrf" value={session.csrf} />
            <button type="submit">Sign out</button>
          </form>
        </header>
        <main>
          <h1>{props.title}</h1>
          <Flash flash={props.frame.flash} />
          {props.children}
        </main>
      </body>
    </html>
  );
}

/** The page shown without a session: the sign-in form. */
export function SignInPage(props: { base: string; error?: string; status?: number }) {
  return (
    <html lang="en">
      <Head base={props.base} title="Sign in" />
      <body class="signin">
        <main>
          <h1>agentinfra console</h1>
          <form method="post" action={`${props.base}/login`} class="card">
            <label for="bridge-key">Bridge key</label>
            <input id="bridge-key" name="key" type="password" autocomplete="current-password" required />
            {props.error ? (
              <p class="flash error" role="alert">
                {props.error}
              </p>
            ) : null}
            <button type="submit">Sign in</button>
          </form>
          <p class="hint">
            The bridge key is printed by `agentinfra serve --init` and kept in the server's config; the console keeps it only on the server.
          </p>
        </main>
      </body>
    </html>
  );
}
