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

/** The console's icon, inline (a `data:` URL, so the browser asks for no `/favicon.ico`). */
export const FAVICON = `data:image/svg+xml,${encodeURIComponent(
  "<svg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 16 16'><rect width='16' height='16' rx='3' fill='#16202e'/>" +
    "<path d='M3.5 12.5 8 3.5l4.5 9M5.5 9h5' fill='none' stroke='#fff' stroke-width='1.8'/></svg>",
)}`;

function Head(props: { base: string; title: string }) {
  return (
    <head>
      <meta charset="utf-8" />
      <meta name="viewport" content="width=device-width, initial-scale=1" />
      <title>{`${props.title} · agentinfra console`}</title>
      <link rel="icon" type="image/svg+xml" href={FAVICON} />
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

/**
 * A full console page: a skip link, the header with the navigation and
 * Sign out, the way back (`crumbs`: name and path of the pages above this
 * one), the flash message, then the content.
 */
export function Layout(props: {
  frame: PageFrame;
  title: NavName | string;
  current?: NavName;
  crumbs?: ReadonlyArray<readonly [string, string]>;
  children?: Child;
}) {
  const { base, session } = props.frame;
  return (
    <html lang="en">
      <Head base={base} title={props.title} />
      <body>
        <a class="skip" href="#main">
          Skip to content
        </a>
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
        <main id="main" tabindex={-1}>
          {props.crumbs?.length ? (
            <nav aria-label="Breadcrumb" class="crumbs">
              {props.crumbs.map(([name, path]) => (
                <>
                  <a href={path}>{name}</a>
                  <span aria-hidden="true"> › </span>
                </>
              ))}
              <span aria-current="page">{props.title}</span>
            </nav>
          ) : null}
          <h1>{props.title}</h1>
          <Flash flash={props.frame.flash} />
          {props.children}
        </main>
      </body>
    </html>
  );
}

/** Why the sign-in page is shown, besides a first visit. */
export type SignInNotice = 'expired';

/** The page shown without a session: the sign-in form; `next` is the console page to return to afterwards. */
export function SignInPage(props: { base: string; error?: string; notice?: SignInNotice; next?: string }) {
  return (
    <html lang="en">
      <Head base={props.base} title="Sign in" />
      <body class="signin">
        <main id="main">
          <h1>agentinfra console</h1>
          {props.notice === 'expired' && !props.error ? (
            <p class="flash warn" role="status">
              Your session ended; sign in again.
            </p>
          ) : null}
          <form method="post" action={`${props.base}/login`} class="card">
            {props.next ? <input type="hidden" name="next" value={props.next} /> : null}
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
            The bridge key is printed once by <code>pnpm start</code> (or <code>agentinfra init</code>) when it writes{' '}
            <code>agentinfra.config.json</code>: it is <code>bridgeKey</code> in that file, or the <code>AGENTINFRA_BRIDGE_KEY</code>{' '}
            environment variable. The console keeps it only on the server.
          </p>
        </main>
      </body>
    </html>
  );
}

/** An error as a console page (navigation included): a title for the status and the message, without the API's `code:` prefix. */
export function ErrorPage(props: { frame: PageFrame; status: number; message: string }) {
  const title =
    props.status === 404 ? 'Not found' : props.status === 403 ? 'Refused' : props.status >= 500 ? 'Something went wrong' : 'Cannot do that';
  return (
    <Layout frame={props.frame} title={title}>
      <p class="flash error" role="alert">
        {props.message}
      </p>
      <p>
        <a href={`${props.frame.base}/`}>Back to the overview</a>
      </p>
    </Layout>
  );
}
