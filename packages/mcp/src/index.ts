export { ARTIFACT_URI_PREFIX } from './artifact-resources.js';
export { renderToolsMarkdown } from './docs/tools-markdown.js';
export { type McpSurfaceOptions, mcpSurface } from './http-surface.js';
export { createMcpServer, type McpServerOptions, SERVER_INSTRUCTIONS } from './mcp-server.js';
export { runStdioProxy, type StdioProxyOptions } from './stdio-proxy.js';
export {
  annotationsOf,
  buildToolCatalog,
  mayUse,
  type RouteTool,
  type SurfaceTool,
  type ToolDefinition,
  toolView,
} from './tool-catalog.js';
export { toolNameOf } from './tool-names.js';
