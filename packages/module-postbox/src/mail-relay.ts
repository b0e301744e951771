import type { Transporter } from 'nodemailer';

/**
 * nodemailer's transports and MailComposer, imported by the first relay send or
 * composed message (the module loader keeps them): loading them takes about 0.1 s
 * of CPU, which CLI commands (they import every module) and servers that send no
 * mail never need.
 */
const loadNodemailer = async () => (await import('nodemailer')).default;
const loadMailComposer = async () => (await import('nodemailer/lib/mail-composer')).default;

/**
 * A transport created from nodemailer on first use (`get`), so that a relay
 * that never sends never loads it. `close` closes it at once when it exists,
 * or as soon as a later `get` creates it (which then sends on a closed
 * transport, as the first `send` after `close` did when it was created eagerly).
 */
function lazyTransport(create: (nodemailer: Awaited<ReturnType<typeof loadNodemailer>>) => Transporter) {
  let created: Promise<Transporter> | undefined;
  let transport: Transporter | undefined;
  let closed = false;
  return {
    get: () =>
      (created ??= loadNodemailer().then((nodemailer) => {
        transport = create(nodemailer);
        if (closed) transport.close();
        return transport;
      })),
    close: () => {
      closed = true;
      transport?.close();
    },
  };
}

/**
 * Longest one hand-over to the relay may take, in ms, from connecting to the
 * relay's answer to the end of DATA: socket timeouts only notice silence, so
 * a relay that trickles bytes would otherwise hold a delivery open for good.
 */
export const RELAY_SEND_TIMEOUT_MS = 90_000;

/** Sends composed messages to the configured relay. */
export interface MailRelay {
  /** `smtp://host:port` / `smtps://…` without credentials, or `json`. */
  readonly description: string;
  /**
   * Hands one raw RFC 5322 message to the relay for the envelope given. When
   * `signal` aborts, or the hand-over takes longer than the relay's send
   * timeout, the SMTP connection carrying it is closed at once (bytes not yet
   * handed to the operating system are dropped, not flushed) and the promise
   * rejects. A relay that got the final `.` of DATA all the same may still
   * deliver the message: SMTP cannot tell.
   * @throws RelayError (driver error as `cause`) when the relay refuses or cannot be reached, or the
   *   send timeout passes (not permanent); the `signal`'s reason when `signal` aborted.
   */
  send(options: { from: string; to: readonly string[]; raw: Buffer; signal: AbortSignal }): Promise<void>;
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
 * Connections are pooled; an aborted or timed-out send closes only its own
 * connection. `sendTimeoutMs` bounds one send (default
 * {@link RELAY_SEND_TIMEOUT_MS}). Errors name the relay's host and the SMTP
 * answer, never the user or password.
 */
export function createMailRelay(options: { relayUrl: string; rejectUnauthorized: boolean; sendTimeoutMs?: number }): MailRelay {
  const sendTimeoutMs = options.sendTimeoutMs ?? RELAY_SEND_TIMEOUT_MS;
  if (options.relayUrl === 'json') {
    const transport = lazyTransport((nodemailer) => nodemailer.createTransport({ jsonTransport: true }));
    return {
      description: 'json',
      async send({ from, to, raw, signal }) {
        await (await transport.get()).sendMail({ envelope: { from, to: [...to] }, raw, signal });
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
  const transport = lazyTransport((nodemailer) =>
    nodemailer.createTransport({
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
      // Closing a connection destroys its socket rather than ending it: ending flushes what is
      // still buffered, so an abandoned delivery could send the rest of its message, final dot
      // included, after the job gave up on it.
      socketCloseTimeout: 0,
    }),
  );
  const redact = (text: string) => {
    let clean = text;
    for (const secret of [pass, user]) if (secret.length >= 3) clean = clean.split(secret).join('***');
    return clean;
  };
  return {
    description,
    async send({ from, to, raw, signal }) {
      const deadline = AbortSignal.timeout(sendTimeoutMs);
      const pool = await transport.get();
      try {
        // nodemailer's pool closes the connection of a send whose signal aborts and fails that send.
        await pool.sendMail({ envelope: { from, to: [...to] }, raw, signal: AbortSignal.any([signal, deadline]) });
      } catch (error) {
        if (signal.aborted) throw signal.reason;
        if (deadline.aborted) {
          throw new RelayError(`Relay ${description} did not take the message within ${sendTimeoutMs / 1000} s.`, false, { cause: error });
        }
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
  const MailComposer = await loadMailComposer();
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
