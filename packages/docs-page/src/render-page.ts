import { escapeHtml, inlineMarkdown, markdownToHtml } from './html.js';
import type { OpenApiDocument, OperationObject, SchemaObject } from './openapi-document.js';
import { renderFields } from './render-schema.js';

/** Where the page links to. */
export interface PageLinks {
  /** URL of the page's stylesheet. */
  stylesheet: string;
  /** URL of the OpenAPI document. */
  openapi: string;
}

interface Entry {
  path: string;
  operation: OperationObject;
}

const CREDENTIAL_NAMES: Record<string, string> = { bridgeKey: 'bridge key', deviceKey: 'device key', delegationToken: 'delegation token' };

function jsonBlock(value: unknown, label: string): string {
  return `<pre tabindex="0" aria-label="${escapeHtml(label)}"><code>${escapeHtml(JSON.stringify(value, null, 2))}</code></pre>`;
}

function responseRows(operation: OperationObject, doc: OpenApiDocument, schemas: Record<string, SchemaObject>): string {
  const parts: string[] = [];
  const errors: string[] = [];
  for (const [status, response] of Object.entries(operation.responses)) {
    if (response.$ref) {
      const name = response.$ref.slice(response.$ref.lastIndexOf('/') + 1);
      const title = doc.components?.responses?.[name]?.description ?? name;
      errors.push(`<a href="#error-${escapeHtml(status)}" title="${escapeHtml(title)}">${escapeHtml(status)}</a>`);
      continue;
    }
    const schema = response.content?.['application/json']?.schema;
    parts.push(
      `<h4>Response ${escapeHtml(status)}</h4>`,
      schema ? renderFields(schema, schemas) : `<p>${escapeHtml(response.description ?? '')}</p>`,
    );
  }
  if (errors.length > 0) parts.push(`<p class="errors"><span class="label">Errors</span> ${errors.join(' ')}</p>`);
  return parts.join('\n');
}

function renderOperation(entry: Entry, doc: OpenApiDocument, schemas: Record<string, SchemaObject>): string {
  const { path, operation } = entry;
  const body = operation.requestBody?.content['application/json'];
  return [
    `<article class="operation" id="${escapeHtml(operation.operationId)}">`,
    `<h3><span class="method">POST</span> <code class="path">${escapeHtml(path)}</code></h3>`,
    operation.description ? markdownToHtml(operation.description) : `<p>${inlineMarkdown(operation.summary ?? '')}</p>`,
    '<h4>Request body</h4>',
    body?.schema ? renderFields(body.schema, schemas) : '<p>None.</p>',
    body?.example === undefined ? '' : `<p class="label">Example</p>\n${jsonBlock(body.example, `Example request for ${path}`)}`,
    responseRows(operation, doc, schemas),
    '</article>',
  ].join('\n');
}

function renderModule(tag: { name: string; description?: string }, entries: Entry[], doc: OpenApiDocument): string {
  const schemas = doc.components?.schemas ?? {};
  const index = entries
    .map(
      ({ path, operation }) =>
        `<li><a href="#${escapeHtml(operation.operationId)}"><code>${escapeHtml(path.slice(path.indexOf(tag.name) + tag.name.length))}</code></a> ${inlineMarkdown(operation.summary ?? '')}</li>`,
    )
    .join('\n');
  return [
    `<section class="module" id="module-${escapeHtml(tag.name)}" aria-labelledby="module-${escapeHtml(tag.name)}-title">`,
    `<h2 id="module-${escapeHtml(tag.name)}-title">${escapeHtml(tag.name)}</h2>`,
    tag.description ? markdownToHtml(tag.description) : '',
    `<ul class="index">\n${index}\n</ul>`,
    ...entries.map((entry) => renderOperation(entry, doc, schemas)),
    '</section>',
  ].join('\n');
}

function renderCredentials(doc: OpenApiDocument): string {
  const schemes = Object.entries(doc.components?.securitySchemes ?? {});
  const items = schemes
    .map(([name, scheme]) => `<dt>${escapeHtml(CREDENTIAL_NAMES[name] ?? name)}</dt><dd>${inlineMarkdown(scheme.description ?? '')}</dd>`)
    .join('\n');
  return `<section id="credentials" aria-labelledby="credentials-title"><h2 id="credentials-title">Credentials</h2>
<p>Send one as <code>Authorization: Bearer &lt;credential&gt;</code> (or in an <code>apikey</code> header). Each operation says which credentials it takes and which permission a delegation token needs for it.</p>
<dl>\n${items}\n</dl></section>`;
}

function renderErrors(doc: OpenApiDocument): string {
  const statusOf: Record<string, string> = {};
  for (const item of Object.values(doc.paths).flatMap((methods) => Object.values(methods))) {
    for (const [status, response] of Object.entries(item.responses)) {
      if (response.$ref) statusOf[response.$ref.slice(response.$ref.lastIndexOf('/') + 1)] = status;
    }
  }
  const rows = Object.entries(doc.components?.responses ?? {})
    .map(([name, response]) => {
      const example = response.content?.['application/json']?.example as { error?: { code?: string } } | undefined;
      const status = statusOf[name] ?? '';
      return `<tr id="error-${escapeHtml(status)}"><td>${escapeHtml(status)}</td><td><code>${escapeHtml(example?.error?.code ?? name)}</code></td><td>${inlineMarkdown(response.description)}</td></tr>`;
    })
    .join('\n');
  return `<section id="errors" aria-labelledby="errors-title"><h2 id="errors-title">Errors</h2>
<p>Every error has the body <code>{ "error": { "code": "…", "message": "…", "details": … } }</code>; <code>details</code> is optional.</p>
<table class="error-table"><thead><tr><th scope="col">Status</th><th scope="col">Code</th><th scope="col">When</th></tr></thead>
<tbody>\n${rows}\n</tbody></table></section>`;
}

/**
 * The API reference as one HTML page, rendered on the server from the
 * OpenAPI document: an overview, the credentials, the error codes, and per
 * module (tag) every operation with its request and response fields and a
 * request example. No script; the stylesheet is the only subresource.
 */
export function renderDocsPage(doc: OpenApiDocument, links: PageLinks): string {
  const entries = Object.entries(doc.paths).flatMap(([path, methods]) => Object.values(methods).map((operation) => ({ path, operation })));
  const tagNames = [...(doc.tags ?? []).map((tag) => tag.name), ...entries.flatMap((entry) => entry.operation.tags ?? [])];
  const tags = [...new Set(tagNames)].map((name) => doc.tags?.find((tag) => tag.name === name) ?? { name });
  const byTag = (name: string) => entries.filter((entry) => entry.operation.tags?.[0] === name);
  const title = `${doc.info.title} API reference`;
  const nav = tags
    .map(
      (tag) =>
        `<li><a href="#module-${escapeHtml(tag.name)}">${escapeHtml(tag.name)}</a> <span class="count">${byTag(tag.name).length}</span></li>`,
    )
    .join('\n');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<link rel="stylesheet" href="${escapeHtml(links.stylesheet)}">
</head>
<body>
<a class="skip" href="#main">Skip to content</a>
<header class="top">
<p class="brand">${escapeHtml(doc.info.title)} <span class="version">v${escapeHtml(doc.info.version)}</span></p>
<a href="${escapeHtml(links.openapi)}">OpenAPI document</a>
</header>
<div class="layout">
<nav aria-label="Contents">
<ul>
<li><a href="#overview">Overview</a></li>
<li><a href="#credentials">Credentials</a></li>
<li><a href="#errors">Errors</a></li>
</ul>
<p class="label">Modules</p>
<ul class="modules">
${nav}
</ul>
</nav>
<main id="main">
<section id="overview" aria-labelledby="overview-title">
<h1 id="overview-title">${escapeHtml(title)}</h1>
${markdownToHtml(doc.info.description ?? '')}
<p>The same reference, machine-readable: <a href="${escapeHtml(links.openapi)}">${escapeHtml(links.openapi)}</a> (OpenAPI 3.1).</p>
</section>
${renderCredentials(doc)}
${renderErrors(doc)}
${tags.map((tag) => renderModule(tag, byTag(tag.name), doc)).join('\n')}
</main>
</div>
</body>
</html>
`;
}
