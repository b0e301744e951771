import { STDIO_DEFAULT_MAX_BUFFER_SIZE, serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ErrorCode, type JSONRPCErrorResponse, type JSONRPCMessage, JSONRPCMessageSchema } from '@modelcontextprotocol/sdk/types.js';

/** Options of {@link StdioLineTransport}. */
export interface StdioLineTransportOptions {
  stdin: NodeJS.ReadableStream;
  stdout: NodeJS.WritableStream;
  /** Told, in one line without the refused line's content, of each line answered with an error. */
  onInvalidLine: (description: string) => void;
  /** Longest line in bytes (default the SDK's 10 MiB); a longer one is skipped to its end and answered -32600. */
  maxLineBytes?: number;
}

/** Decodes a line as UTF-8, refusing bytes that are not (JSON text is UTF-8), as `/mcp` does. */
const utf8 = new TextDecoder('utf-8', { fatal: true });

/** A string or number id of a line that reads as a request or notification, for the error answering it. */
function requestIdOf(value: unknown): { id?: string | number } {
  if (typeof value !== 'object' || value === null || Array.isArray(value) || !('method' in value)) return {};
  const { id } = value as { id?: unknown };
  return typeof id === 'string' || typeof id === 'number' ? { id } : {};
}

/**
 * The server side of MCP's stdio transport: newline-delimited JSON-RPC
 * messages read from `stdin` (a trailing `\r` dropped), answers written to
 * `stdout` one per line. The SDK's `StdioServerTransport` hands a line it
 * cannot read to `onerror` and answers nothing, so the client is never told
 * and a request on that line waits out its timeout. Here every line that is
 * not a message gets a JSON-RPC error, as JSON-RPC 2.0 asks:
 * - not JSON (or not UTF-8 text): -32700 Parse error;
 * - JSON that is not one JSON-RPC 2.0 message (a batch included: MCP
 *   2025-06-18 dropped batches, and the SDK never read them on stdio), or a
 *   line over `maxLineBytes` (skipped to its end): -32600 Invalid Request.
 *
 * The error carries the line's id when it reads as a request with a string
 * or number id, and no id otherwise: MCP's schema (2025-11-25) leaves `id` out
 * of an error that names no request, where plain JSON-RPC writes `null`,
 * which MCP clients refuse. Blank lines are skipped. A partial last line is
 * read when `stdin` ends.
 */
export class StdioLineTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  readonly #options: StdioLineTransportOptions;
  readonly #maxLineBytes: number;
  #pending: Buffer[] = [];
  #pendingBytes = 0;
  /** Whether the current line passed `maxLineBytes` and is being skipped to its end. */
  #overlong = false;
  #lineNumber = 0;

  constructor(options: StdioLineTransportOptions) {
    this.#options = options;
    this.#maxLineBytes = options.maxLineBytes ?? STDIO_DEFAULT_MAX_BUFFER_SIZE;
  }

  readonly #ondata = (chunk: Buffer | string): void => {
    let rest = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    let newline = rest.indexOf(0x0a);
    while (newline >= 0) {
      this.#take(rest.subarray(0, newline));
      this.#endLine();
      rest = rest.subarray(newline + 1);
      newline = rest.indexOf(0x0a);
    }
    this.#take(rest);
  };

  readonly #onend = (): void => {
    if (this.#pendingBytes > 0 || this.#overlong) this.#endLine();
  };

  readonly #onerror = (error: Error): void => this.onerror?.(error);

  /** Starts reading `stdin`. */
  async start(): Promise<void> {
    this.#options.stdin.on('data', this.#ondata);
    this.#options.stdin.on('end', this.#onend);
    this.#options.stdin.on('error', this.#onerror);
  }

  /** Writes `message` as one line; resolves once `stdout` took it (after a `drain` when its buffer is full). */
  send(message: JSONRPCMessage): Promise<void> {
    return this.#write(message);
  }

  /** Stops reading `stdin` (pausing it when nothing else reads it) and calls `onclose`. */
  async close(): Promise<void> {
    const { stdin } = this.#options;
    stdin.off('data', this.#ondata);
    stdin.off('end', this.#onend);
    stdin.off('error', this.#onerror);
    if (stdin.listenerCount('data') === 0) stdin.pause();
    this.#pending = [];
    this.#pendingBytes = 0;
    this.onclose?.();
  }

  #write(message: JSONRPCMessage): Promise<void> {
    return new Promise((resolve) => {
      if (this.#options.stdout.write(serializeMessage(message))) resolve();
      else this.#options.stdout.once('drain', resolve);
    });
  }

  /** Adds `bytes` to the current line, unless it is over the limit. */
  #take(bytes: Buffer): void {
    if (this.#overlong || bytes.byteLength === 0) return;
    if (this.#pendingBytes + bytes.byteLength > this.#maxLineBytes) {
      this.#overlong = true;
      this.#pending = [];
      this.#pendingBytes = 0;
      return;
    }
    this.#pending.push(bytes);
    this.#pendingBytes += bytes.byteLength;
  }

  /** Reads the current line, now complete, as a message or answers it with an error. */
  #endLine(): void {
    this.#lineNumber += 1;
    const line = this.#lineNumber;
    const bytes = Buffer.concat(this.#pending, this.#pendingBytes);
    const overlong = this.#overlong;
    this.#pending = [];
    this.#pendingBytes = 0;
    this.#overlong = false;
    if (overlong) {
      this.#refuse(ErrorCode.InvalidRequest, `Invalid Request: line ${line} of stdin is over ${this.#maxLineBytes} bytes.`, {});
      return;
    }
    let value: unknown;
    try {
      const text = utf8.decode(bytes).replace(/\r$/, '');
      if (text.trim() === '') return;
      value = JSON.parse(text);
    } catch {
      this.#refuse(ErrorCode.ParseError, `Parse error: line ${line} of stdin is not JSON.`, {});
      return;
    }
    const message = JSONRPCMessageSchema.safeParse(value);
    if (message.success) {
      this.onmessage?.(message.data);
      return;
    }
    const reason = Array.isArray(value)
      ? `is a batch; JSON-RPC batches are not part of MCP since 2025-06-18: send one message per line.`
      : `is not a JSON-RPC 2.0 message (a request, notification or response object with "jsonrpc": "2.0").`;
    this.#refuse(ErrorCode.InvalidRequest, `Invalid Request: line ${line} of stdin ${reason}`, requestIdOf(value));
  }

  /** Answers a line that is no message, and says so through `onInvalidLine`. */
  #refuse(code: number, message: string, id: { id?: string | number }): void {
    this.#options.onInvalidLine(`${message} Answered with JSON-RPC error ${code}.`);
    const answer: JSONRPCErrorResponse = { jsonrpc: '2.0', ...id, error: { code, message } };
    void this.#write(answer);
  }
}
