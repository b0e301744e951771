import { agentIdSchema, type EnvBinding } from '@agentinfra/core';
import { z } from 'zod';
import { DEFAULT_MAX_REFUSED_RECIPIENTS, DEFAULT_REFUSED_RECIPIENTS_WINDOW_MS } from './smtp/refused-recipients.js';

/** A host name for the mail domain: dot-separated LDH labels (RFC 1035 / RFC 5321 §4.1.2 `Domain`), or `localhost`. */
/** Longest `webhookTimeoutMs` accepted (ms); the webhook job's own timeout leaves room past it. */
export const MAX_WEBHOOK_TIMEOUT_MS = 120_000;

const mailDomainSchema = z
  .string()
  .min(1)
  .max(253)
  .transform((value) => value.toLowerCase())
  .pipe(
    z
      .string()
      .regex(
        /^(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/,
        'must be a domain name such as mail.example.com',
      ),
  );

/** The bundled SMTP listener (RFC 5321 server built on `smtp-server`). */
const smtpSchema = z.object({
  /**
   * TCP port of the bundled MTA. `0` turns it off (CONTRACT.md), `'auto'`
   * binds any free port (tests, several servers on one host; read it from
   * the service's `smtpAddress()` or the start-up banner). Default 2525; 25 in
   * production behind the domain's MX record.
   */
  port: z.union([z.number().int().min(0).max(65_535), z.literal('auto')]).default(2525),
  /** Bind address of the listener. Default 127.0.0.1; `0.0.0.0` to receive mail from the Internet. */
  host: z.string().min(1).default('127.0.0.1'),
  /** Name the server greets with and announces in EHLO (default: the mail domain). */
  hostname: z.string().min(1).max(253).optional(),
  /** Largest message accepted, in bytes, announced with SIZE (RFC 1870); larger ones get 552. Default 10 MiB. */
  maxMessageBytes: z.number().int().min(1_024).max(157_286_400).default(10_485_760),
  /** PEM certificate chain file: when set with `tlsKeyFile`, STARTTLS (RFC 3207) is offered; otherwise it is not. */
  tlsCertFile: z.string().min(1).optional(),
  /** PEM private key file of `tlsCertFile`. */
  tlsKeyFile: z.string().min(1).optional(),
  /** Simultaneous SMTP connections; more are refused with 421. */
  maxClients: z.number().int().min(1).max(10_000).default(256),
  /** Idle SMTP connections are closed after this many ms. */
  socketTimeoutMs: z.number().int().min(1_000).max(3_600_000).default(60_000),
  /**
   * The idle timeout in ms while the listener is under stress (at least 3/4
   * of `maxClients` connected, until fewer than half are), as Postfix's
   * `smtpd_timeout = ${stress?10}:{300}s`. Default 10 s.
   */
  stressSocketTimeoutMs: z.number().int().min(1_000).max(3_600_000).default(10_000),
  /**
   * Longest a message's DATA transfer may take, in ms, however steadily its
   * bytes arrive; past it the server answers 421 4.4.2 and closes the
   * connection (the sender retries). Default 10 minutes.
   */
  dataTimeoutMs: z.number().int().min(1_000).max(86_400_000).default(600_000),
  /**
   * Recipients refused with 550 (no such mailbox) that one client address
   * (an IPv6 client's /64) gets within `refusedRecipientsWindowMs`, over all
   * its sessions and, with Redis, all replicas; past them every RCPT TO from
   * it is answered 421 before its address is looked up, so that guessing
   * addresses one session after another learns nothing more. Default 50.
   */
  maxRefusedRecipients: z.number().int().min(1).max(1_000_000).default(DEFAULT_MAX_REFUSED_RECIPIENTS),
  /** The sliding window of `maxRefusedRecipients`, in ms. Default 1 hour. */
  refusedRecipientsWindowMs: z
    .number()
    .int()
    .min(1_000)
    .max(7 * 86_400_000)
    .default(DEFAULT_REFUSED_RECIPIENTS_WINDOW_MS),
});

/** Where the injection score comes from. */
const scorerSchema = z.discriminatedUnion('kind', [
  /** The built-in local scorer: no network, no model download. */
  z.object({ kind: z.literal('local') }),
  /**
   * A model server: `POST <url>` with JSON `{ text, subject, body, html }`
   * answered by `{ score }` in 0..1. When it fails or times out, the local
   * scorer's score is used and a warning is logged.
   */
  z.object({
    kind: z.literal('http'),
    url: z.url({ protocol: /^https?$/ }),
    /** Sent as `Authorization: Bearer <token>` when set. Never logged. */
    token: z.string().min(1).optional(),
    timeoutMs: z.number().int().min(10).max(60_000).default(2_000),
  }),
]);

/** The `postbox` section of the config. */
export const postboxConfigSchema = z
  .object({
    /** Domain of allocated addresses (`<local_part>@<mailDomain>`). */
    mailDomain: mailDomainSchema.default('localhost'),
    /**
     * Local parts no agent may allocate (case-insensitive): the role mailboxes
     * of RFC 2142 and RFC 5321 (postmaster), the addresses a certificate
     * authority may use to validate control of the domain (CA/Browser Forum
     * Baseline Requirements 3.2.2.4.4: admin, administrator, webmaster,
     * hostmaster, postmaster), root and mailer-daemon. Set `[]` to allow every one.
     */
    reservedLocalParts: z
      .array(z.string().min(1).max(64))
      .max(1_000)
      .default(['postmaster', 'abuse', 'hostmaster', 'webmaster', 'security', 'noc', 'admin', 'administrator', 'root', 'mailer-daemon']),
    /**
     * The agent that receives mail for `postmaster@<mailDomain>` and for
     * `RCPT TO:<postmaster>` without a domain, which RFC 5321 §4.5.1 says a
     * server MUST accept (see `postmaster.ts`). Unset (the default), no agent
     * does: the reserved local part is refused with 550 like any address
     * nobody holds. Mail is filed under this agent id, its rules and webhooks
     * apply, with `to` = `postmaster@<mailDomain>`. Checked against the agents
     * at each RCPT TO and /ingest (agents may be created after start-up): while
     * no agent has this id, postmaster mail is refused as when it is unset, and
     * the start logs a warning.
     */
    postmasterAgent: agentIdSchema.optional(),
    smtp: smtpSchema.default({
      port: 2525,
      host: '127.0.0.1',
      maxMessageBytes: 10_485_760,
      maxClients: 256,
      socketTimeoutMs: 60_000,
      stressSocketTimeoutMs: 10_000,
      dataTimeoutMs: 600_000,
      maxRefusedRecipients: DEFAULT_MAX_REFUSED_RECIPIENTS,
      refusedRecipientsWindowMs: DEFAULT_REFUSED_RECIPIENTS_WINDOW_MS,
    }),
    /**
     * Outbound relay: `smtp://user:pass@host:port` (STARTTLS when offered),
     * `smtps://…` (TLS from the first byte), or `json` (nodemailer's
     * jsonTransport: nothing leaves the machine, messages are marked sent;
     * development only). Absent: outbound mail stays `queued`.
     */
    relayUrl: z
      .string()
      .regex(/^(smtps?:\/\/.+|json)$/, 'must be smtp://…, smtps://… or json')
      .optional(),
    /** Verify the relay's TLS certificate (turn off only for a lab relay with a self-signed certificate). */
    relayRejectUnauthorized: z.boolean().default(true),
    /** Attempts per outbound message before it is marked `failed` (5xx answers fail at once). */
    sendMaxAttempts: z.number().int().min(1).max(50).default(8),
    /** Attempts per webhook delivery (exponential back-off with jitter between them). */
    webhookMaxAttempts: z.number().int().min(1).max(50).default(12),
    /** Milliseconds one webhook delivery may take. */
    webhookTimeoutMs: z.number().int().min(100).max(MAX_WEBHOOK_TIMEOUT_MS).default(15_000),
    /** Seconds the previous secret keeps signing after /webhook/rotate (CONTRACT.md default 24 h). */
    webhookGraceSeconds: z
      .number()
      .int()
      .min(0)
      .max(30 * 86_400)
      .default(86_400),
    scorer: scorerSchema.default({ kind: 'local' }),
    /** Largest `body` (and `html`) of /send and /ingest in UTF-8 bytes; larger is 413. */
    maxBodyBytes: z.number().int().min(1_024).max(52_428_800).default(1_048_576),
  })
  .superRefine((config, ctx) => {
    if (Boolean(config.smtp.tlsCertFile) !== Boolean(config.smtp.tlsKeyFile)) {
      ctx.addIssue({ code: 'custom', path: ['smtp', 'tlsKeyFile'], message: 'tlsCertFile and tlsKeyFile go together' });
    }
  });

/** The validated `postbox` config section. */
export type PostboxConfig = z.output<typeof postboxConfigSchema>;
/** The `postbox` config section as written in `agentinfra.config.json` (every field optional). */
export type PostboxConfigInput = z.input<typeof postboxConfigSchema>;

/** Environment variables of the postbox section (CONTRACT.md "Running it" plus the postbox's own). */
export const postboxEnv: readonly EnvBinding[] = [
  { name: 'AGENTINFRA_SMTP_PORT', path: ['smtp', 'port'], type: 'integer' },
  { name: 'AGENTINFRA_SMTP_HOST', path: ['smtp', 'host'], type: 'string' },
  { name: 'AGENTINFRA_SMTP_HOSTNAME', path: ['smtp', 'hostname'], type: 'string' },
  { name: 'AGENTINFRA_SMTP_MAX_MESSAGE_BYTES', path: ['smtp', 'maxMessageBytes'], type: 'integer' },
  { name: 'AGENTINFRA_SMTP_TLS_CERT_FILE', path: ['smtp', 'tlsCertFile'], type: 'string' },
  { name: 'AGENTINFRA_SMTP_TLS_KEY_FILE', path: ['smtp', 'tlsKeyFile'], type: 'string' },
  { name: 'AGENTINFRA_MAIL_DOMAIN', path: ['mailDomain'], type: 'string' },
  { name: 'AGENTINFRA_POSTMASTER_AGENT', path: ['postmasterAgent'], type: 'string' },
  { name: 'AGENTINFRA_SMTP_RELAY_URL', path: ['relayUrl'], type: 'string' },
  { name: 'AGENTINFRA_WEBHOOK_GRACE_SECONDS', path: ['webhookGraceSeconds'], type: 'integer' },
  { name: 'AGENTINFRA_POSTBOX_SCORER', path: ['scorer', 'kind'], type: 'string' },
  { name: 'AGENTINFRA_POSTBOX_SCORER_URL', path: ['scorer', 'url'], type: 'string' },
  { name: 'AGENTINFRA_POSTBOX_SCORER_TOKEN', path: ['scorer', 'token'], type: 'string' },
];
