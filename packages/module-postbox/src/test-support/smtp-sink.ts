import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

/** A message the sink accepted. */
export interface SunkMessage {
  from: string;
  to: string[];
  raw: string;
  user: string | null;
}

/** A local SMTP server standing in for the outbound relay. */
export interface SmtpSink {
  port: number;
  messages: SunkMessage[];
  /** Recipients containing this text are refused with 550 at RCPT TO; `null` accepts all. */
  refuseRecipientsWith: string | null;
  /** When set, every DATA is answered with this temporary error (451) instead of being accepted. */
  failTemporarily: boolean;
  close(): Promise<void>;
}

/**
 * Starts an SMTP sink on 127.0.0.1 (no STARTTLS; optional AUTH PLAIN/LOGIN
 * checked against `credentials`).
 */
export async function startSmtpSink(options: { credentials?: { user: string; pass: string } } = {}): Promise<SmtpSink> {
  const sink: Omit<SmtpSink, 'port' | 'close'> = { messages: [], refuseRecipientsWith: null, failTemporarily: false };
  const server = new SMTPServer({
    disabledCommands: options.credentials ? ['STARTTLS'] : ['STARTTLS', 'AUTH'],
    authOptional: !options.credentials,
    allowInsecureAuth: true,
    logger: false,
    onAuth(auth, _session, callback) {
      const ok = auth.username === options.credentials?.user && auth.password === options.credentials?.pass;
      callback(
        ok ? null : Object.assign(new Error('535 5.7.8 Authentication failed'), { responseCode: 535 }),
        ok ? { user: auth.username } : undefined,
      );
    },
    onRcptTo(address, _session, callback) {
      if (sink.refuseRecipientsWith && address.address.includes(sink.refuseRecipientsWith)) {
        callback(Object.assign(new Error('5.1.1 No such user'), { responseCode: 550 }));
        return;
      }
      callback();
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        if (sink.failTemporarily) {
          callback(Object.assign(new Error('4.3.0 Try again later'), { responseCode: 451 }));
          return;
        }
        sink.messages.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((rcpt) => rcpt.address),
          raw: Buffer.concat(chunks).toString('utf8'),
          user: typeof session.user === 'string' ? session.user : null,
        });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.server.address() as AddressInfo).port;
  return Object.assign(sink, { port, close: () => new Promise<void>((resolve) => server.close(() => resolve())) });
}
