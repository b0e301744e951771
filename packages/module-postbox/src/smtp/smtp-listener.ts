import { readFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { addressGroup, dependencyFailure, InsufficientStorageError, type PortMap } from '@agentinfra/core';
import type { SMTPServerDataStream, SMTPServerSession } from 'smtp-server';
import { LocalSenderError, OriginatorFormError } from '../local-senders.js';
import { MalformedMessageError } from '../mime-parser-pool.js';
import { createReadPacing, SMTP_BYTES_PER_TURN } from './read-pacing.js';
import type { RefusedRecipients } from './refused-recipients.js';
import { createSessionLimits, MAX_RECIPIENTS, MAX_SESSIONS_PER_ADDRESS } from './session-limits.js';
import { createSharedBytes } from './shared-bytes.js';
import type { SmtpMetrics } from './smtp-metrics.js';
import { createStressMode } from './stress-mode.js';

/** An SMTP reply as an error `smtp-server` sends: `responseCode` and text (with its RFC 3463 enhanced code). */
function smtpReply(code: number, message: string): Error {
  return Object.assign(new Error(message), { responseCode: code });
}

/** RFC 3463 5.7.1 (delivery not authorized): the sender field `error` names is one of this postbox's addresses. */
function localSenderRefusal(error: LocalSenderError): Error {
  return smtpReply(550, `5.7.1 ${error.message}`);
}

/** What the listener uses of an open `smtp-server` connection (`SMTPServer.connections`). */
interface OpenConnection {
  id: string;
  send(code: number, text: string): void;
  close(): void;
}

/** Answers `code text` on the connection of session `sessionId` and closes it; nothing when it is gone. */
function closeSession(connections: Iterable<OpenConnection>, sessionId: string, code: number, text: string): void {
  for (const connection of connections) {
    if (connection.id !== sessionId) continue;
    connection.send(code, text);
    connection.close();
    return;
  }
}

/** What the listener needs from the postbox. */
export interface SmtpHandlers {
  /** Whether mail for `address` (lower-case) is accepted. */
  acceptsRecipient(address: string): Promise<boolean>;
  /** The local address (bare, lower-case) that the envelope sender `address` is (any at the mail domain, or an agent's), or `null`. */
  localSender(address: string): Promise<string | null>;
  /**
   * Stores, scores and files one message for the envelope recipients; `raw` is backed by a
   * SharedArrayBuffer ({@link createSharedBytes}), so worker threads read it without a copy.
   * @returns the message ids.
   * @throws MalformedMessageError (answered 554 5.6.0), OriginatorFormError (550 5.6.0),
   *   LocalSenderError (550 5.7.1);
   *   anything else is answered 451 or 452.
   */
  deliver(options: { raw: Buffer; recipients: readonly string[]; envelopeFrom: string | null }): Promise<string[]>;
}

/** Options of {@link startSmtpListener}. */
export interface SmtpListenerOptions {
  /** 0 = any free port. */
  port: number;
  host: string;
  /** Greeting and EHLO name. */
  hostname: string;
  maxMessageBytes: number;
  maxClients: number;
  /** Idle timeout, ms. */
  socketTimeoutMs: number;
  /** Idle timeout under stress (`stress-mode.ts`), ms. */
  stressSocketTimeoutMs: number;
  /** Longest a DATA transfer may take, ms; then 421 4.4.2 and the connection is closed. */
  dataTimeoutMs: number;
  tlsCertFile?: string | undefined;
  tlsKeyFile?: string | undefined;
  logger: PortMap['logger'];
  handlers: SmtpHandlers;
  /** Counts sessions, messages by outcome and refused recipients. */
  metrics?: SmtpMetrics;
  /** Refused recipients per client address group across sessions (`refused-recipients.ts`); without it, only the per-session limit applies. */
  refusedRecipients?: RefusedRecipients;
}

/** A running SMTP listener. */
export interface SmtpListener {
  readonly address: { host: string; port: number };
  readonly starttls: boolean;
  close(): Promise<void>;
}

/**
 * Starts the bundled MTA (RFC 5321 with `smtp-server`) for inbound mail:
 * no AUTH (inbound mail needs none); STARTTLS (RFC 3207) only when a
 * certificate is configured; SIZE (RFC 1870) announced and enforced (552);
 * RCPT TO refused with 550 5.1.1 for addresses the postbox does not have, at
 * RCPT time rather than by a later bounce; a sender address of this postbox
 * refused with 550 5.7.1 (`local-senders.ts`): at MAIL FROM for the envelope,
 * after DATA for the `From` and `Sender` headers (`MAIL FROM:<>` is accepted); a header with more than one
 * `From` or `Sender` field, or with a CR not followed by LF, refused with 550 5.6.0 after DATA; a DATA transfer longer than
 * `dataTimeoutMs` answered 421 4.4.2 and closed; per-client limits of
 * `session-limits.ts` (recipients per message, refused recipients per
 * session, sessions per address) and refused recipients per client address
 * across sessions (`refused-recipients.ts`: past them every RCPT TO gets 421,
 * before the address is looked up); an idle timeout cut to
 * `stressSocketTimeoutMs` while most slots are taken (`stress-mode.ts`); one accepted DATA is stored
 * once and delivered to every accepted recipient. A message mailparser
 * refuses (a header block over 1 MiB, more than 1,000 MIME parts) gets
 * 554 5.6.0, a permanent failure; any other failure while storing answers
 * 451 so that the sending MTA retries.
 * @throws the listen error (its `code` EADDRINUSE, EACCES, …) when the port cannot be bound; the read error when the certificate files cannot be read.
 */
export async function startSmtpListener(options: SmtpListenerOptions): Promise<SmtpListener> {
  const tls =
    options.tlsCertFile && options.tlsKeyFile
      ? { cert: await readFile(options.tlsCertFile), key: await readFile(options.tlsKeyFile) }
      : null;
  const { logger, handlers, metrics, refusedRecipients } = options;
  // Imported here, not with this file: CLI commands import every module, and only a running server listens (smtp-server takes ~0.08 s of CPU to load).
  const { SMTPServer } = await import('smtp-server');
  const pacing = createReadPacing(SMTP_BYTES_PER_TURN);
  const limits = createSessionLimits();
  const server = new SMTPServer({
    name: options.hostname,
    banner: 'agentinfra postbox',
    size: options.maxMessageBytes,
    rejectOversized: true,
    authOptional: true,
    disabledCommands: tls ? ['AUTH'] : ['AUTH', 'STARTTLS'],
    ...(tls ?? {}),
    maxClients: options.maxClients,
    socketTimeout: options.socketTimeoutMs,
    closeTimeout: 5_000,
    logger: false,
    onConnect(session, callback) {
      metrics?.sessions.inc();
      if (!limits.open(session.id, addressGroup(session.remoteAddress))) {
        callback(smtpReply(421, `4.7.0 Too many connections from your address (at most ${MAX_SESSIONS_PER_ADDRESS}), try again later`));
        return;
      }
      stress.update(limits.size);
      callback();
    },
    onClose(session) {
      limits.close(session.id);
      stress.update(limits.size);
    },
    // After STARTTLS the idle timeout runs on the TLS socket, armed when the handshake began: one that
    // finished under stress (or after it) gets the idle timeout of now.
    onSecure(socket, _session, callback) {
      socket.setTimeout(server.options.socketTimeout ?? options.socketTimeoutMs);
      callback();
    },
    // RFC 5321 §3.3 / RFC 3463 5.7.1: a sender of this postbox is refused at MAIL FROM, before any recipient
    // is named; the null reverse-path of a bounce (`MAIL FROM:<>`) has no address and is accepted.
    onMailFrom(address, _session, callback) {
      if (address.address === '') {
        callback();
        return;
      }
      handlers.localSender(address.address).then(
        (local) => {
          if (local === null) {
            callback();
            return;
          }
          metrics?.messages.inc({ outcome: 'rejected' });
          logger.info({ field: 'MAIL FROM' }, 'smtp: refused a sender address of this server');
          callback(localSenderRefusal(new LocalSenderError('MAIL FROM', local)));
        },
        (error: unknown) => {
          logger.error({ err: error }, 'smtp: sender lookup failed');
          callback(smtpReply(451, '4.3.0 Temporary failure, try again later'));
        },
      );
    },
    onRcptTo(address, session, callback) {
      const recipient = address.address.toLowerCase();
      if (session.envelope.rcptTo.length >= MAX_RECIPIENTS) {
        callback(smtpReply(452, `4.5.3 Too many recipients (at most ${MAX_RECIPIENTS} per message)`));
        return;
      }
      const group = addressGroup(session.remoteAddress);
      const tooManyGuesses = () => callback(smtpReply(421, '4.7.0 Too many unknown recipients from your address, try again later'));
      const answer = async (): Promise<void> => {
        // Checked before the lookup, so that the answer is the same whether the address exists or not.
        if (refusedRecipients && (await refusedRecipients.exhausted(group))) {
          tooManyGuesses();
          return;
        }
        let accepted: boolean;
        try {
          accepted = await handlers.acceptsRecipient(recipient);
        } catch (error) {
          logger.error({ err: error }, 'smtp: recipient lookup failed');
          callback(smtpReply(451, '4.3.0 Temporary failure, try again later'));
          return;
        }
        if (accepted) {
          callback(null);
          return;
        }
        metrics?.recipientsRejected.inc();
        if (refusedRecipients && !(await refusedRecipients.refuse(group))) {
          tooManyGuesses();
          return;
        }
        if (limits.refused(session.id)) {
          callback(smtpReply(421, '4.7.0 Too many unknown recipients, closing the connection'));
          return;
        }
        callback(smtpReply(550, `5.1.1 <${recipient}>: no such mailbox here`));
      };
      void answer();
    },
    onData(stream: SMTPServerDataStream, session: SMTPServerSession, callback) {
      const collected = createSharedBytes(options.maxMessageBytes);
      // smtp-server answers DATA only once the stream ends, so a sender trickling bytes
      // below the idle timeout would hold the session (and the bytes so far) forever.
      const deadline = setTimeout(() => {
        metrics?.messages.inc({ outcome: 'rejected' });
        logger.info(
          { remote_address: session.remoteAddress, data_timeout_ms: options.dataTimeoutMs },
          'smtp: closed a DATA transfer that took too long',
        );
        const seconds = Math.round(options.dataTimeoutMs / 1000);
        closeSession(server.connections, session.id, 421, `4.4.2 Message transfer took longer than ${seconds} s, closing the connection`);
      }, options.dataTimeoutMs);
      deadline.unref();
      stream.on('data', (chunk: Buffer) => {
        collected.add(chunk);
        pacing.took(chunk.length, stream);
      });
      stream.once('error', (error) => {
        clearTimeout(deadline);
        callback(error);
      });
      stream.once('end', () => {
        clearTimeout(deadline);
        if (stream.sizeExceeded) {
          metrics?.messages.inc({ outcome: 'rejected' });
          callback(smtpReply(552, `5.3.4 Message exceeds the fixed maximum message size of ${options.maxMessageBytes} bytes`));
          return;
        }
        const recipients = [...new Set(session.envelope.rcptTo.map((rcpt) => rcpt.address.toLowerCase()))];
        const envelopeFrom = session.envelope.mailFrom ? session.envelope.mailFrom.address : null;
        handlers.deliver({ raw: collected.bytes(), recipients, envelopeFrom }).then(
          (ids) => {
            metrics?.messages.inc({ outcome: 'accepted' });
            callback(null, `2.0.0 OK: queued as ${ids.join(',') || 'nothing'}`);
          },
          (error: unknown) => {
            if (error instanceof LocalSenderError) {
              metrics?.messages.inc({ outcome: 'rejected' });
              logger.info({ field: error.field }, 'smtp: refused a sender address of this server');
              callback(localSenderRefusal(error));
              return;
            }
            if (error instanceof OriginatorFormError) {
              metrics?.messages.inc({ outcome: 'rejected' });
              logger.info({ reason: error.message }, 'smtp: refused a message whose originator fields it does not take');
              // RFC 3463 5.6.0 (media error): the header is not one RFC 5322 allows, or not one read alike by all; permanent.
              callback(smtpReply(550, `5.6.0 ${error.message}`));
              return;
            }
            if (error instanceof MalformedMessageError) {
              metrics?.messages.inc({ outcome: 'rejected' });
              logger.info({ reason: error.message }, 'smtp: refused a message mailparser cannot read');
              callback(smtpReply(554, `5.6.0 Message cannot be read: ${error.message}`));
              return;
            }
            metrics?.messages.inc({ outcome: 'failed' });
            logger.error({ err: error }, 'smtp: storing a message failed');
            // RFC 5321 §4.2.2 452 with RFC 3463's 4.3.1 "mail system full": the sender keeps the message and retries later.
            if (dependencyFailure(error) instanceof InsufficientStorageError) {
              callback(smtpReply(452, '4.3.1 Insufficient system storage, try again later'));
              return;
            }
            callback(smtpReply(451, '4.3.0 Temporary failure while storing the message, try again later'));
          },
        );
      });
    },
  });
  const stress = createStressMode({
    maxClients: options.maxClients,
    idleTimeoutMs: options.socketTimeoutMs,
    stressIdleTimeoutMs: options.stressSocketTimeoutMs,
    applyIdleTimeout(timeoutMs) {
      // smtp-server reads `options.socketTimeout` each time it arms a socket's idle timeout; a socket armed
      // already gets the new length from now on. `_socket` (typed by smtp-server) is the TLS socket once a
      // STARTTLS handshake finished; during one it is the raw socket, and `onSecure` sets the TLS socket's.
      server.options.socketTimeout = timeoutMs;
      for (const connection of server.connections) connection._socket.setTimeout(timeoutMs);
    },
    changed(stressed, open) {
      const fields = { open_sessions: open, max_clients: options.maxClients, idle_timeout_ms: server.options.socketTimeout };
      if (stressed) logger.warn(fields, 'smtp: most connection slots are taken; idle clients now get the stress idle timeout');
      else logger.info(fields, 'smtp: connection slots are free again; idle clients get the usual idle timeout');
    },
  });
  // smtp-server re-emits its socket's listen error: the rejection below reports that one, the caller logs it once.
  const listening = () => undefined;
  server.on('error', listening);
  await new Promise<void>((resolve, reject) => {
    server.server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.server.off('error', reject);
      resolve();
    });
  });
  server.off('error', listening);
  server.on('error', (error) => logger.warn({ err: error }, 'smtp: connection error'));
  const bound = server.server.address() as AddressInfo;
  return {
    address: { host: options.host, port: bound.port },
    starttls: tls !== null,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
