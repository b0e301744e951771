import { Readable } from 'node:stream';
import {
  AgentInfraError,
  type Clock,
  dependencyFailure,
  errorBody,
  type HttpMount,
  InputError,
  methodNotAllowed,
  NotAllowedError,
  NotFoundError,
  PayloadTooLargeError,
  ServiceUnavailableError,
} from '@agentinfra/core';
import { create as contentDisposition } from 'content-disposition';
import { keyOfUrlPath } from './blob-url-path.js';
import { decideRange } from './byte-range.js';
import { UploadSizeError } from './fs-adapter-error.js';
import type { ByteSource, ObjectFolder } from './object-folder.js';
import { readSignedQuery, type SignedFields, verifyFields } from './url-signature.js';

/** A value Node accepts in a response header: tab, space and visible ASCII. */
const HEADER_SAFE = /^[\t\x20-\x7E]*$/;
const CORS = {
  'access-control-allow-origin': '*',
  'access-control-expose-headers': 'content-length, content-range, content-disposition, accept-ranges',
};

/** Headers every download carries so that stored bytes can never act as a page of the server's origin. */
const SAFE_DOWNLOAD = {
  'x-content-type-options': 'nosniff',
  'content-security-policy': "default-src 'none'; sandbox",
  'cache-control': 'private, no-store',
};

/** The request body's chunks; a failure to read it (the client went away) is the client's error, not the server's. */
async function* requestBody(body: AsyncIterable<Uint8Array>): ByteSource {
  try {
    yield* body;
  } catch (error) {
    throw new InputError(`The upload was interrupted (${(error as Error).message}).`);
  }
}

function errorResponse(error: AgentInfraError): Response {
  const headers: Record<string, string> = { 'content-type': 'application/json', ...CORS };
  // The rest of a refused body is never read: close the connection so the client does not reuse it.
  if (error instanceof PayloadTooLargeError) headers.connection = 'close';
  if (error instanceof ServiceUnavailableError) headers['retry-after'] = String(error.retryAfterSeconds);
  return new Response(JSON.stringify(errorBody(error)), { status: error.status, headers });
}

/**
 * The HTTP side of the fs blob store, mounted by the kernel at `basePath`:
 * `PUT <basePath>/<key>?expires&size&signature` streams the body to disk
 * (exactly `size` bytes: a longer body is cut off with 413, a shorter one is
 * 400, and nothing is stored either way), `GET`/`HEAD
 * <basePath>/<key>?expires[&type][&filename]&signature` serves the object
 * with single-range support. Bad or expired signatures answer 403, unknown
 * objects 404; bodies follow the CONTRACT.md error shape. CORS is open
 * (`*`): the URLs are bearer credentials, never cookies.
 */
export function createSignedUrlMount(options: { basePath: string; folder: ObjectFolder; secret: Uint8Array; clock: Clock }): HttpMount {
  const { basePath, folder, secret, clock } = options;

  function authorize(url: URL, method: SignedFields['method']): SignedFields {
    const key = keyOfUrlPath(url.pathname.slice(basePath.length + 1));
    if (key === null) throw new InputError('The URL does not name a valid object key.');
    const signed = readSignedQuery(url.searchParams, method, key);
    if (!signed || !verifyFields(secret, signed.fields, signed.signature)) {
      throw new NotAllowedError(`The signature of this URL is not valid for ${method}.`);
    }
    if (clock.now() >= signed.fields.expires) {
      throw new NotAllowedError(`This URL expired at ${new Date(signed.fields.expires).toISOString()}.`);
    }
    return signed.fields;
  }

  async function upload(request: Request, body: AsyncIterable<Uint8Array>, url: URL): Promise<Response> {
    const fields = authorize(url, 'PUT');
    const size = fields.size ?? 0;
    const declared = request.headers.get('content-length');
    if (declared !== null) {
      const length = Number(declared);
      if (length > size) throw new PayloadTooLargeError(`This URL accepts exactly ${size} bytes; Content-Length is ${declared}.`);
      if (length < size) throw new InputError(`This URL accepts exactly ${size} bytes; Content-Length is ${declared}.`);
    }
    try {
      await folder.write({ key: fields.key, source: requestBody(body), exactSize: size });
    } catch (error) {
      if (error instanceof UploadSizeError) {
        throw error.kind === 'too_large'
          ? new PayloadTooLargeError(`This URL accepts exactly ${size} bytes; the body is longer.`)
          : new InputError(`This URL accepts exactly ${size} bytes; the body is shorter.`);
      }
      throw error;
    }
    return new Response(null, { status: 200, headers: CORS });
  }

  async function download(request: Request, url: URL): Promise<Response> {
    const fields = authorize(url, 'GET');
    const handle = await folder.open(fields.key);
    if (!handle) throw new NotFoundError('The object does not exist.');
    let handOver = false;
    try {
      const { size, mtime } = await handle.stat();
      const headers: Record<string, string> = {
        ...CORS,
        ...SAFE_DOWNLOAD,
        // A media type stored before registrations were held to header-safe ASCII is served as bytes instead of failing.
        'content-type': fields.type !== undefined && HEADER_SAFE.test(fields.type) ? fields.type : 'application/octet-stream',
        'accept-ranges': 'bytes',
        'last-modified': mtime.toUTCString(),
      };
      if (fields.filename !== undefined) headers['content-disposition'] = contentDisposition(fields.filename);
      const range = decideRange(size, request.headers.get('range'), request.headers.get('if-range'));
      if (range.kind === 'unsatisfiable') {
        const message = `The requested range is outside the object of ${size} bytes.`;
        return new Response(JSON.stringify({ error: { code: 'range_not_satisfiable', message } }), {
          status: 416,
          headers: { 'content-type': 'application/json', ...CORS, 'content-range': `bytes */${size}` },
        });
      }
      const start = range.kind === 'partial' ? range.start : 0;
      const end = range.kind === 'partial' ? range.end : size - 1;
      headers['content-length'] = String(end - start + 1);
      if (range.kind === 'partial') headers['content-range'] = `bytes ${start}-${end}/${size}`;
      const status = range.kind === 'partial' ? 206 : 200;
      if (request.method === 'HEAD' || size === 0) return new Response(null, { status, headers });
      const stream = handle.createReadStream({ start, end });
      handOver = true;
      return new Response(Readable.toWeb(stream) as ReadableStream, { status, headers });
    } finally {
      if (!handOver) await handle.close();
    }
  }

  async function answer(request: Request, body: AsyncIterable<Uint8Array>): Promise<Response> {
    const url = new URL(request.url);
    if (!url.pathname.startsWith(`${basePath}/`)) throw new NotFoundError(`No object URL ${url.pathname}.`);
    switch (request.method) {
      case 'PUT':
        return upload(request, body, url);
      case 'GET':
      case 'HEAD':
        return download(request, url);
      case 'OPTIONS':
        return new Response(null, {
          status: 204,
          headers: {
            ...CORS,
            'access-control-allow-methods': 'GET, HEAD, PUT',
            'access-control-allow-headers': 'content-type, range',
            'access-control-max-age': '600',
          },
        });
      default:
        return methodNotAllowed(request.method, ['GET', 'HEAD', 'PUT'], CORS);
    }
  }

  return {
    path: basePath,
    async fetch(request, body, info) {
      try {
        return await answer(request, body);
      } catch (error) {
        if (error instanceof AgentInfraError) return errorResponse(error);
        // A full disk (507) or a busy one (503) is answered here, with the CORS headers a browser needs to read it, and
        // logged through the kernel. An upload's body may not have been read to the end: close the connection.
        const failure = dependencyFailure(error);
        if (failure === null) throw error;
        info?.logFailure(error);
        const response = errorResponse(failure);
        if (request.method === 'PUT') response.headers.set('connection', 'close');
        return response;
      }
    },
  };
}
