import { revealedText } from './reveal-text.js';
import { Revealed } from './revealed.js';

/** The badge colour of a run's status: red for `failed`, green for `succeeded`, grey otherwise. */
export function runBadge(status: string): string {
  return `badge ${status === 'failed' ? 'bad' : status === 'succeeded' ? 'ok' : ''}`;
}

/**
 * The time zone to show after a job's cadence: the job's `timezone` for a
 * cron expression or macro, none for `@every` (which ignores the zone, see
 * agent-scheduler's README) or when the cadence names its zone itself
 * (`CRON_TZ=` or `TZ=` prefix).
 */
export function cadenceZone(cadence: string, timezone: string): string | null {
  const text = cadence.trim();
  return /^(?:CRON_TZ|TZ)=/.test(text) || /^@every(?:\s|$)/i.test(text) ? null : timezone;
}

/** A job's cadence as written, with the time zone its cron fields are read in when that matters. */
export function Cadence(props: { cadence: string; timezone: string }) {
  const zone = cadenceZone(props.cadence, props.timezone);
  return (
    <td class="cadence">
      <code>
        <Revealed text={props.cadence} />
      </code>
      {zone ? ` ${zone}` : null}
    </td>
  );
}

/**
 * A job's last run: its status, and under it for a failed run the start of
 * its error on one line (cut with an ellipsis so the Jobs table keeps its
 * width; the full text is the tooltip, is read by screen readers, and is in
 * the Runs table).
 */
export function LastRun(props: { run: { status: string; error: string | null } | null }) {
  if (!props.run) return <td>—</td>;
  return (
    <td class="last-run">
      <span class={runBadge(props.run.status)}>{props.run.status}</span>{' '}
      {props.run.error ? (
        <span class="error-text clip" title={revealedText(props.run.error)}>
          <Revealed text={props.run.error} />
        </span>
      ) : null}
    </td>
  );
}
