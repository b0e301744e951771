import { maxHeaderSize, type Server, type ServerResponse, STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import { AgentInfraError, errorBody, InputError, PayloadTooLargeError, RequestTimeoutError } from '../errors.js';

/**
 * Milliseconds a connection is kept after the answer to a request Node could
 * not parse, so that the client reads the answer before the connection is
 * reset; a client that sends more in the meantime is cut off at once.
 */
const LINGER_MS = 2_000;

/** What Node's HTTP parser reports with `clientError` (llhttp's code and its fixed description of the fault). */
interface ParserError extends Error {
  code?: string;
  reason?: string;
}

/** 431 `request_header_fields_too_large` (RFC 6585 §5): the request line and headers are over Node's limit. */
export function headersTooLarge(): AgentInfraError {
  return new AgentInfraError(
    431,
    'request_header_fields_too_large',
    `The request line and headers are over ${maxHeaderSize} bytes in all; send fewer or shorter headers.`,
    { details: { max_header_bytes: maxHeaderSize } },
  );
}

/**
 * The CONTRACT.md error for a request Node refused before any handler saw
 * it, with the statuses Node answers such requests with itself: 431 for
 * headers over `--max-http-header-size`, 413 for chunk extensions over its
 * limit, 408 when the headers (or, with `requestTimeout`, the request) did
 * not arrive in time, 400 for anything else. The message names the
 * parser's fixed description of the fault (llhttp's `reason`, such as
 * "Duplicate Content-Length"), never the request's bytes.
 */
export function clientErrorFor(error: ParserError): AgentInfraError {
  switch (error.code) {
    case 'HPE_HEADER_OVERFLOW':
      return headersTooLarge();
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return new PayloadTooLargeError("The chunk extensions of the request body are over the server's limit.");
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return new RequestTimeoutError('The request did not arrive in time.');
    default: {
      const reason = error.code?.startsWith('HPE_') && typeof error.reason === 'string' ? ` (${error.reason})` : '';
      return new InputError(`The request is not valid HTTP/1.1${reason}.`);
    }
  }
}

/**
 * A whole HTTP/1.1 response carrying `error`'s CONTRACT.md body, with
 * `Content-Type: application/json`, `Content-Length` and `Connection: close`,
 * for writing straight to a socket that has no response object.
 */
export function rawErrorResponse(error: AgentInfraError): string {
  const body = JSON.stringify(errorBody(error));
  return (
    `HTTP/1.1 ${error.status} ${STATUS_CODES[error.status] ?? ''}\r\n` +
    'Content-Type: application/json\r\n' +
    `Content-Length: ${Buffer.byteLength(body)}\r\n` +
    'Connection: close\r\n\r\n' +
    body
  );
}

/**
 * Answers the requests Node's HTTP parser refuses (`clientError`: a
 * malformed request line, an invalid or repeated `Content-Length`, headers
 * over the limit, a headers timeout …) with the CONTRACT.md error body of
 * {@link clientErrorFor} instead of Node's empty one, then ends the
 * connection (destroyed {@link LINGER_MS} later, or at once if the client
 * sends more). Like Node, it writes only when the socket is writable and no
 * response on it has started (its headers sent); otherwise, and for a reset
 * connection (`ECONNRESET`), the socket is destroyed without an answer.
 */
export function answerClientErrors(server: Server): void {
  server.on('clientError', (error: ParserError, socket: Socket) => {
    // Node's own default checks the same field: the response the socket is writing, if any.
    const current = (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage;
    if (error.code === 'ECONNRESET' || !socket.writable || current?.headersSent) {
      socket.destroy();
      return;
    }
    socket.end(rawErrorResponse(clientErrorFor(error)));
    const linger = setTimeout(() => socket.destroy(), LINGER_MS);
    linger.unref();
    socket.once('close', () => clearTimeout(linger));
  });
}
