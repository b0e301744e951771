export { type DocsSurfaceOptions, docsSurface } from './docs-surface.js';
export type { OpenApiDocument } from './openapi-document.js';
export { type PageLinks, renderDocsPage } from './render-page.js';
