import { connect, type Socket } from 'node:net';

/** Longest wait for one SMTP reply before the session fails. */
const REPLY_TIMEOUT_MS = 60_000;

/** The final reply code of each SMTP step of one session; `data` is the code after the message's terminating dot. */
export interface SmtpOutcome {
  rcpt: number;
  data: number;
}

/**
 * `mime` (CRLF line ends expected) as SMTP DATA content (RFC 5321 §4.5.2):
 * a line that starts with a dot gets a second one, and the text ends in CRLF.
 */
export function dotStuff(mime: string): string {
  const stuffed = mime.replace(/(^|\r\n)\./g, '$1..');
  return stuffed.endsWith('\r\n') ? stuffed : `${stuffed}\r\n`;
}

/**
 * Sends one message over one plain SMTP session (EHLO, MAIL, RCPT, DATA,
 * QUIT) to `127.0.0.1:port`: `message` is its UTF-8 pieces, written in
 * order exactly as given ({@link dotStuff} already applied), without any
 * client library reshaping headers or lines, so that pathological input
 * reaches the server unchanged. A refused RCPT skips DATA (`data` is then 0).
 * @throws Error when the connection fails, closes early or a reply takes longer than 60 s.
 */
export async function sendRawMail(port: number, envelope: { from: string; to: string }, message: readonly Buffer[]): Promise<SmtpOutcome> {
  const socket = connect({ host: '127.0.0.1', port });
  const replies = replyReader(socket);
  try {
    await replies.next();
    await command(socket, replies, 'EHLO bench.worst-case.test');
    await command(socket, replies, `MAIL FROM:<${envelope.from}>`);
    const rcpt = await command(socket, replies, `RCPT TO:<${envelope.to}>`);
    if (rcpt >= 400) return { rcpt, data: 0 };
    const go = await command(socket, replies, 'DATA');
    if (go !== 354) return { rcpt, data: go };
    socket.cork();
    for (const piece of message) socket.write(piece);
    socket.write('.\r\n');
    socket.uncork();
    const data = await replies.next();
    socket.write('QUIT\r\n');
    return { rcpt, data };
  } finally {
    socket.destroy();
  }
}

/** Reads complete SMTP replies (the last line of a multi-line reply has a space after the code) and yields their codes. */
function replyReader(socket: Socket): { next(): Promise<number> } {
  let buffered = '';
  const codes: number[] = [];
  let waiting: { resolve(code: number): void; reject(error: Error): void } | undefined;
  let failure: Error | undefined;
  const fail = (error: Error) => {
    failure = error;
    waiting?.reject(error);
    waiting = undefined;
  };
  socket.on('data', (chunk: Buffer) => {
    buffered += chunk.toString('latin1');
    for (let end = buffered.indexOf('\r\n'); end >= 0; end = buffered.indexOf('\r\n')) {
      const line = buffered.slice(0, end);
      buffered = buffered.slice(end + 2);
      if (line[3] === '-') continue;
      const code = Number(line.slice(0, 3));
      if (waiting) {
        waiting.resolve(code);
        waiting = undefined;
      } else codes.push(code);
    }
  });
  socket.on('error', fail);
  socket.on('close', () => fail(new Error('SMTP connection closed')));
  return {
    next: () => {
      const code = codes.shift();
      if (code !== undefined) return Promise.resolve(code);
      if (failure) return Promise.reject(failure);
      return new Promise<number>((resolve, reject) => {
        const timer = setTimeout(() => fail(new Error(`no SMTP reply within ${REPLY_TIMEOUT_MS} ms`)), REPLY_TIMEOUT_MS);
        waiting = {
          resolve: (value) => {
            clearTimeout(timer);
            resolve(value);
          },
          reject: (error) => {
            clearTimeout(timer);
            reject(error);
          },
        };
      });
    },
  };
}

async function command(socket: Socket, replies: { next(): Promise<number> }, line: string): Promise<number> {
  socket.write(`${line}\r\n`);
  return replies.next();
}
