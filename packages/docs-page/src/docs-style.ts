/** The docs page's stylesheet, served beside it (a file of its own keeps the CSP free of `unsafe-inline`). */
export const DOCS_CSS = `:root {
  color-scheme: light;
  --fg: #1f2328;
  --muted: #57606a;
  --border: #d0d7de;
  --accent: #0550ae;
  --code-bg: #f6f8fa;
  --method: #116329;
}
*, *::before, *::after { box-sizing: border-box; }
html { scroll-padding-top: 1rem; }
body {
  margin: 0;
  color: var(--fg);
  background: #fff;
  font: 16px/1.55 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
}
a { color: var(--accent); }
code, pre { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, "Liberation Mono", monospace; font-size: 0.875em; }
code { overflow-wrap: break-word; }
p code, li code, dd code { background: var(--code-bg); padding: 0.1em 0.3em; border-radius: 4px; }
pre { background: var(--code-bg); border: 1px solid var(--border); border-radius: 6px; padding: 0.75rem 1rem; overflow-x: auto; line-height: 1.45; }
pre:focus-visible, a:focus-visible { outline: 2px solid var(--accent); outline-offset: 2px; }
.skip { position: absolute; left: -999px; top: 0; background: #fff; padding: 0.5rem 1rem; }
.skip:focus { left: 1rem; }
.top { display: flex; justify-content: space-between; align-items: center; gap: 1rem; padding: 0.75rem 1.5rem; border-bottom: 1px solid var(--border); }
.brand { margin: 0; font-weight: 600; font-size: 1.1rem; }
.version { color: var(--muted); font-weight: 400; font-size: 0.9rem; }
.layout { display: grid; grid-template-columns: 15rem minmax(0, 1fr); max-width: 88rem; margin: 0 auto; }
nav { position: sticky; top: 0; align-self: start; max-height: 100vh; overflow-y: auto; padding: 1.25rem 1rem; }
nav ul { list-style: none; margin: 0 0 1rem; padding: 0; }
nav li { padding: 0.2rem 0; }
nav a { text-decoration: none; }
nav a:hover { text-decoration: underline; }
.count { color: var(--muted); font-size: 0.8rem; }
.label { color: var(--muted); font-size: 0.8rem; font-weight: 600; text-transform: uppercase; letter-spacing: 0.04em; margin: 0.75rem 0 0.25rem; }
main { min-width: 0; padding: 1.5rem 2.5rem 4rem; border-left: 1px solid var(--border); }
h1 { font-size: 2rem; margin: 0 0 1rem; }
h2 { font-size: 1.5rem; margin: 3rem 0 0.75rem; padding-bottom: 0.3rem; border-bottom: 1px solid var(--border); }
h3 { font-size: 1.1rem; margin: 0 0 0.5rem; display: flex; flex-wrap: wrap; align-items: baseline; gap: 0.5rem; }
h4 { font-size: 0.95rem; margin: 1.25rem 0 0.5rem; }
.method { background: var(--method); color: #fff; font-size: 0.75rem; font-weight: 700; padding: 0.15rem 0.45rem; border-radius: 4px; }
.path { font-size: 1rem; overflow-wrap: anywhere; }
.operation { border: 1px solid var(--border); border-radius: 8px; padding: 1.25rem 1.5rem; margin: 1.5rem 0; }
.index { padding-left: 1.25rem; }
.index li { margin: 0.2rem 0; }
.errors .label { margin-right: 0.5rem; }
.errors a { margin-right: 0.35rem; }
.muted { color: var(--muted); }
.req { color: #a40e26; font-size: 0.75rem; font-weight: 600; white-space: nowrap; }
table { border-collapse: collapse; width: 100%; font-size: 0.9rem; }
th, td { text-align: left; vertical-align: top; padding: 0.45rem 0.6rem; border-bottom: 1px solid var(--border); }
th { background: var(--code-bg); }
.fields td:first-child { width: 30%; }
.fields td:nth-child(2) { width: 20%; color: var(--muted); }
dt { font-weight: 600; margin-top: 0.5rem; }
dd { margin: 0.25rem 0 0.5rem 1.25rem; }
@media (max-width: 50rem) {
  .layout { grid-template-columns: minmax(0, 1fr); }
  nav { position: static; max-height: none; border-bottom: 1px solid var(--border); padding: 0.75rem 1rem; }
  nav ul { display: flex; flex-wrap: wrap; gap: 0.25rem 1rem; margin-bottom: 0.5rem; }
  main { padding: 1rem 1rem 3rem; border-left: 0; }
  h1 { font-size: 1.5rem; }
  .top { padding: 0.75rem 1rem; }
  .operation { padding: 1rem; }
  .fields thead, .error-table thead { position: absolute; width: 1px; height: 1px; overflow: hidden; clip-path: inset(50%); }
  .fields tr, .error-table tr { display: block; padding: 0.5rem 0; border-bottom: 1px solid var(--border); }
  .fields td, .error-table td { display: block; border: 0; padding: 0.1rem 0; }
  .error-table td:first-child, .error-table td:nth-child(2) { display: inline-block; margin-right: 0.5rem; font-weight: 600; }
  .fields td:first-child, .fields td:nth-child(2) { width: auto; }
}
`;
