import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

/** One SMTP session of a {@link StallingRelay}. */
export interface RelaySession {
  /** Whether a whole message, final `.` included, was left unanswered on it. */
  stalled: boolean;
  /** When its connection closed (ms since epoch), or `null` while it is open. */
  closedAt: number | null;
}

/** A local SMTP server standing in for an outbound relay that may stall. */
export interface StallingRelay {
  port: number;
  /** While true, every DATA is read to its final `.` and never answered. */
  stall: boolean;
  sessions: RelaySession[];
  /** Raw messages answered with 250. */
  accepted: string[];
  close(): Promise<void>;
}

/** Starts a {@link StallingRelay} on 127.0.0.1 (no AUTH, no STARTTLS), stalling from the start. */
export async function startStallingRelay(): Promise<StallingRelay> {
  const relay: Omit<StallingRelay, 'port' | 'close'> = { stall: true, sessions: [], accepted: [] };
  const sessionOf = new Map<string, RelaySession>();
  const server = new SMTPServer({
    disabledCommands: ['STARTTLS', 'AUTH'],
    authOptional: true,
    logger: false,
    closeTimeout: 100,
    onConnect(session, callback) {
      const tracked: RelaySession = { stalled: false, closedAt: null };
      sessionOf.set(session.id, tracked);
      relay.sessions.push(tracked);
      callback();
    },
    onClose(session) {
      const tracked = sessionOf.get(session.id);
      if (tracked) tracked.closedAt = Date.now();
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        const tracked = sessionOf.get(session.id);
        if (relay.stall) {
          if (tracked) tracked.stalled = true;
          return;
        }
        relay.accepted.push(Buffer.concat(chunks).toString('utf8'));
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.server.address() as AddressInfo).port;
  return Object.assign(relay, { port, close: () => new Promise<void>((resolve) => server.close(() => resolve())) });
}
