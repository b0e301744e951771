import { createHash } from 'node:crypto';
import { fieldIssues } from '@agentinfra/core';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { objectJsonSchema } from './json-schemas.js';
import type { SurfaceTool } from './tool-catalog.js';
import { errorBodyOf, errorResult, successResult } from './tool-errors.js';

/** Name of the tool that uploads bytes to an artifact's upload_url. */
export const UPLOAD_TOOL_NAME = 'artifacts_upload';

const uploadInputSchema = z.strictObject({
  upload_url: z.string().min(1).max(8_192).describe('The upload_url that artifacts_register returned.'),
  content: z
    .string()
    .describe(
      'The file content: the text itself with encoding "utf8", or with encoding "base64" standard base64 (A-Z, a-z, 0-9, +, /) padded with = to a multiple of 4 characters, on one line (no spaces or line breaks; base64url is refused).',
    ),
  encoding: z.enum(['utf8', 'base64']).default('utf8').describe('How `content` is written: "utf8" (default) or "base64" for binary files.'),
});

const uploadOutputSchema = z.object({
  size: z.number().int().describe('Bytes uploaded; must equal the size given to artifacts_register.'),
  sha256: z.string().describe('Lower-case hex SHA-256 of the bytes: pass it to artifacts_commit.'),
});

/** The `artifacts_upload` tool as the catalog lists it (delegations need `artifacts.write`). */
export function uploadToolDefinition(): SurfaceTool {
  return {
    kind: 'surface',
    name: UPLOAD_TOOL_NAME,
    description:
      'Upload the bytes of a registered artifact: give the upload_url from artifacts_register and the content (text, or base64 for binary). The content must be exactly the registered size. Returns size and sha256; then call artifacts_commit with that sha256. For files too large for one message, PUT the bytes to upload_url over HTTP instead.',
    inputSchema: objectJsonSchema(uploadInputSchema, 'input'),
    outputSchema: objectJsonSchema(uploadOutputSchema, 'output'),
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    delegationPermission: 'artifacts.write',
  };
}

/** Runs a request in process (the kernel's `app.request`). */
export type InProcessFetch = (path: string, init: RequestInit) => Promise<Response>;

/**
 * Uploads `content` to a signed upload URL of this server's own blob store,
 * in process: the URL's path and query go to `appRequest`, never to the
 * network, so a model cannot make the server send requests elsewhere.
 * @returns `{ size, sha256 }`, or an error result (invalid input, including
 *   `content` that is not canonical standard base64 with encoding "base64";
 *   a URL this server does not serve; or the blob store's refusal).
 */
export async function runUpload(args: unknown, appRequest: InProcessFetch): Promise<CallToolResult> {
  const parsed = uploadInputSchema.safeParse(args);
  if (!parsed.success) {
    return errorResult({
      error: { code: 'invalid_request', message: 'The arguments do not match the schema.', details: { fields: fieldIssues(parsed.error) } },
    });
  }
  const { upload_url: uploadUrl, content, encoding } = parsed.data;
  let target: URL;
  try {
    target = new URL(uploadUrl);
  } catch {
    return errorResult({
      error: {
        code: 'invalid_request',
        message: 'upload_url is not a URL.',
        details: { fields: [{ path: 'upload_url', message: 'not a URL' }] },
      },
    });
  }
  const bytes = Buffer.from(content, encoding === 'base64' ? 'base64' : 'utf8');
  // Node's decoder skips what is not base64 (`"!!!"` decodes to 0 bytes): only text that encodes back to itself is base64.
  if (encoding === 'base64' && bytes.toString('base64') !== content) {
    const problem = 'not standard base64: use A-Z, a-z, 0-9, + and /, pad with = to a multiple of 4 characters, no spaces or line breaks';
    return errorResult({
      error: {
        code: 'invalid_request',
        message: 'content is not valid base64.',
        details: { fields: [{ path: 'content', message: problem }] },
      },
    });
  }
  if (target.pathname.startsWith('/functions/') || target.pathname === '/mcp' || target.pathname.startsWith('/mcp/')) {
    return errorResult({ error: { code: 'invalid_request', message: 'upload_url is not an upload URL.' } });
  }
  const response = await appRequest(`${target.pathname}${target.search}`, {
    method: 'PUT',
    headers: { 'content-length': String(bytes.length), 'content-type': 'application/octet-stream' },
    body: bytes,
  });
  if (response.status === 404) {
    await response.body?.cancel();
    return errorResult({
      error: {
        code: 'not_found',
        message: 'This upload_url is not served by this agentinfra server (an S3/MinIO bucket): PUT the bytes to it over HTTP instead.',
      },
    });
  }
  if (!response.ok) return errorResult(errorBodyOf(response.status, await response.text()));
  await response.body?.cancel();
  return successResult({ size: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex') });
}
