import type { MetricsRegistry } from '@agentinfra/core';

/** How the bundled MTA answered a message (DATA): `accepted` (250), `rejected` (552 too large, 554 unreadable), `failed` (451, retry). */
export type SmtpMessageOutcome = 'accepted' | 'rejected' | 'failed';

/** The bundled MTA's series. */
export interface SmtpMetrics {
  /** SMTP connections opened. */
  sessions: { inc(): void };
  /** Messages by outcome. */
  messages: { inc(labels: { outcome: SmtpMessageOutcome }): void };
  /** RCPT TO refused with 550 (no such mailbox). */
  recipientsRejected: { inc(): void };
}

/** Registers `agentinfra_smtp_sessions_total`, `agentinfra_smtp_messages_total{outcome}` and `agentinfra_smtp_recipients_rejected_total`. */
export function createSmtpMetrics(metrics: MetricsRegistry): SmtpMetrics {
  return {
    sessions: metrics.counter({ name: 'agentinfra_smtp_sessions_total', help: 'SMTP connections to the bundled MTA.' }),
    messages: metrics.counter<'outcome'>({
      name: 'agentinfra_smtp_messages_total',
      help: 'Messages the bundled MTA answered: accepted, rejected (552, 554) or failed (451).',
      labelNames: ['outcome'],
    }),
    recipientsRejected: metrics.counter({
      name: 'agentinfra_smtp_recipients_rejected_total',
      help: 'RCPT TO refused with 550 (no such mailbox).',
    }),
  };
}
