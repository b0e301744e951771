import { errorBody, type KernelSurface, methodNotAllowed, NotFoundError } from '@agentinfra/core';
import { DOCS_CSS } from './docs-style.js';
import type { OpenApiDocument } from './openapi-document.js';
import { renderDocsPage } from './render-page.js';

/** Options of {@link docsSurface}. */
export interface DocsSurfaceOptions {
  /** Mount path (default `/docs`). */
  path?: string;
  /** URL of the OpenAPI document the page links to (default `/openapi.json`). */
  openapiUrl?: string;
}

/** No script may run, nothing loads from another origin, the page may not be framed. */
const CONTENT_SECURITY_POLICY =
  "default-src 'none'; style-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

function reply(body: string, contentType: string, request: Request): Response {
  return new Response(request.method === 'HEAD' ? null : body, {
    headers: {
      'content-type': contentType,
      'content-security-policy': CONTENT_SECURITY_POLICY,
      'x-content-type-options': 'nosniff',
      'referrer-policy': 'no-referrer',
      'cache-control': 'no-cache',
    },
  });
}

/**
 * The API reference at `/docs`: one HTML page rendered on the server from
 * the kernel's OpenAPI document (built once, on the first request) and its
 * stylesheet at `/docs/docs.css`. Nothing is fetched from another host and
 * no script runs, so it works on an air-gapped host under a strict CSP.
 * GET and HEAD only; no credential (the document is public, as `/openapi.json` is).
 */
export function docsSurface(options: DocsSurfaceOptions = {}): KernelSurface {
  const path = options.path ?? '/docs';
  const links = { stylesheet: `${path}/docs.css`, openapi: options.openapiUrl ?? '/openapi.json' };
  return (kernel) => {
    let page: string | undefined;
    return {
      path,
      fetch(request) {
        if (request.method !== 'GET' && request.method !== 'HEAD') {
          return methodNotAllowed(request.method, ['GET', 'HEAD']);
        }
        const { pathname } = new URL(request.url);
        if (pathname === path || pathname === `${path}/`) {
          page ??= renderDocsPage(kernel.openapi() as unknown as OpenApiDocument, links);
          return reply(page, 'text/html; charset=utf-8', request);
        }
        if (pathname === links.stylesheet) return reply(DOCS_CSS, 'text/css; charset=utf-8', request);
        return Response.json(errorBody(new NotFoundError(`Nothing at ${pathname}; the API reference is at ${path}.`)), { status: 404 });
      },
    };
  };
}
