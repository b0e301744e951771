import { once } from 'node:events';
import { connect, type Socket } from 'node:net';
import { type TLSSocket, connect as tlsConnect } from 'node:tls';

/** A raw SMTP client: sends one command at a time and reads its whole reply (multi-line replies included). */
export async function smtpClient(port: number) {
  const raw: Socket = connect(port, '127.0.0.1');
  let socket: Socket | TLSSocket = raw;
  let buffer = '';
  let closed = false;
  const waiters: Array<() => void> = [];
  const wake = () => {
    for (const waiter of waiters.splice(0)) waiter();
  };
  const onData = (chunk: Buffer) => {
    buffer += chunk.toString();
    wake();
  };
  raw.on('data', onData);
  raw.on('close', () => {
    closed = true;
    wake();
  });
  raw.on('error', () => undefined);
  const reply = async (): Promise<string> => {
    for (;;) {
      const end = buffer.search(/^\d{3} .*\r\n/m);
      if (end !== -1) {
        const stop = buffer.indexOf('\r\n', end) + 2;
        const text = buffer.slice(0, stop);
        buffer = buffer.slice(stop);
        return text;
      }
      if (closed) return '';
      await new Promise<void>((waiter) => waiters.push(waiter));
    }
  };
  const greeting = await reply();
  return {
    greeting,
    command: async (line: string) => {
      if (!closed) socket.write(`${line}\r\n`);
      return reply();
    },
    /** Writes raw bytes (DATA content) without waiting for a reply. */
    send: (text: string) => {
      if (!closed) socket.write(text);
    },
    /** Runs the TLS handshake after a `220` answer to STARTTLS, trusting `ca`; later commands go over TLS. */
    secure: async (ca: Buffer) => {
      raw.off('data', onData);
      const secured = tlsConnect({ socket: raw, servername: 'localhost', ca });
      secured.on('data', onData);
      secured.on('error', () => undefined);
      await once(secured, 'secureConnect');
      socket = secured;
    },
    reply,
    closed: () => closed,
    end: () => socket.destroy(),
  };
}
