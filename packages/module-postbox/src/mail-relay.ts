import nodemailer from 'nodemailer';
import MailComposer from 'nodemailer/lib/mail-composer';

/** Sends composed messages to the configured relay. */
export interface MailRelay {
  /** `smtp://host:port` / `smtps://…` without credentials, or `json`. */
  readonly description: string;
  /**
   * Hands one raw RFC 5322 message to the relay for the envelope given.
   * @throws RelayError (driver error as `cause`) when the relay refuses or cannot be reached.
   */
  send(options: { from: string; to: readonly string[]; raw: Buffer }): Promise<void>;
  close(): void;
}

/** A relay failure; `permanent` when the relay rejected the message for good (5xx). Never carries credentials. */
export class RelayError extends Error {
  override readonly name = 'RelayError';
  constructor(
    message: string,
    readonly permanent: boolean,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

interface NodemailerFailure {
  message?: string;
  code?: string;
  responseCode?: number;
  permanent?: boolean;
}

/**
 * A relay from `relayUrl` (config `postbox.relayUrl`, env
 * `AGENTINFRA_SMTP_RELAY_URL`): `smtp://user:pass@host:port` (upgrades with
 * STARTTLS when the relay offers it), `smtps://…` (TLS from the first byte),
 * or `json` (nodemailer's jsonTransport: nothing is sent; development).
 * Connections are pooled. Errors name the relay's host and the SMTP answer,
 * never the user or password.
 */
export function createMailRelay(options: { relayUrl: string; rejectUnauthorized: boolean }): MailRelay {
  if (options.relayUrl === 'json') {
    const transport = nodemailer.createTransport({ jsonTransport: true });
    return {
      description: 'json',
      async send({ from, to, raw }) {
        await transport.sendMail({ envelope: { from, to: [...to] }, raw });
      },
      close: () => transport.close(),
    };
  }
  const url = new URL(options.relayUrl);
  const secure = url.protocol === 'smtps:';
  const port = url.port === '' ? (secure ? 465 : 587) : Number(url.port);
  const user = decodeURIComponent(url.username);
  const pass = decodeURIComponent(url.password);
  const description = `${url.protocol}//${url.hostname}:${port}`;
  const transport = nodemailer.createTransport({
    pool: true,
    maxConnections: 5,
    host: url.hostname,
    port,
    secure,
    ...(user ? { auth: { user, pass } } : {}),
    tls: { rejectUnauthorized: options.rejectUnauthorized, servername: url.hostname },
    connectionTimeout: 30_000,
    greetingTimeout: 30_000,
    socketTimeout: 60_000,
  });
  const redact = (text: string) => {
    let clean = text;
    for (const secret of [pass, user]) if (secret.length >= 3) clean = clean.split(secret).join('***');
    return clean;
  };
  return {
    description,
    async send({ from, to, raw }) {
      try {
        await transport.sendMail({ envelope: { from, to: [...to] }, raw });
      } catch (error) {
        const failure = error as NodemailerFailure;
        const permanent =
          failure.permanent ?? (failure.responseCode !== undefined && failure.responseCode >= 500 && failure.responseCode !== 503);
        const reason = redact(failure.message ?? String(error)).slice(0, 500);
        throw new RelayError(`Relay ${description} refused the message: ${reason}`, permanent, { cause: error });
      }
    },
    close: () => transport.close(),
  };
}

/** Builds an RFC 5322 message (MIME, UTF-8) with nodemailer's MailComposer. */
export async function composeMessage(options: {
  from: string;
  to: string;
  subject: string;
  text: string;
  html?: string | undefined;
  messageId: string;
  date: Date;
  inReplyTo?: string | undefined;
}): Promise<Buffer> {
  const composer = new MailComposer({
    from: options.from,
    to: options.to,
    subject: options.subject,
    text: options.text,
    ...(options.html === undefined ? {} : { html: options.html }),
    messageId: options.messageId,
    date: options.date,
    ...(options.inReplyTo === undefined ? {} : { inReplyTo: options.inReplyTo, references: options.inReplyTo }),
  });
  return new Promise((resolve, reject) => {
    composer.compile().build((error, message) => (error ? reject(error) : resolve(message)));
  });
}
