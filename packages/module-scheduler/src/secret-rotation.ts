import type { SecretBox } from '@agentinfra/core';
import type { Knex } from 'knex';
import { JOBS, type JobRow, secretContext } from './job-rows.js';

/** The columns of a job row that hold its signing secrets. */
export type SecretColumns = Pick<JobRow, 'secret_sealed' | 'previous_secret_sealed' | 'secret_rotated_at'>;

function openOrNull(secretBox: SecretBox, sealed: string, context: string): string | null {
  try {
    return secretBox.open({ sealed, context });
  } catch {
    return null;
  }
}

/**
 * The secret columns of job `jobId` after a `/job/put` with `secret`
 * (CONTRACT.md "Signed deliveries"): a new job has no previous secret; a
 * changed secret keeps the replaced one (still sealed under the job's
 * context) and the time of the change, which opens a grace window; the same
 * secret again keeps the window as it was. A replaced secret that no longer
 * opens (its master key is gone) cannot sign, so it is not kept.
 */
export function secretColumnsAfterPut(options: {
  secretBox: SecretBox;
  jobId: string;
  secret: string;
  existing: SecretColumns | undefined;
  now: number;
}): SecretColumns {
  const { secretBox, jobId, secret, existing, now } = options;
  const context = secretContext(jobId);
  const sealed = secretBox.seal({ plaintext: secret, context });
  if (!existing) return { secret_sealed: sealed, previous_secret_sealed: null, secret_rotated_at: null };
  const replaced = openOrNull(secretBox, existing.secret_sealed, context);
  if (replaced === secret) {
    return {
      secret_sealed: sealed,
      previous_secret_sealed: existing.previous_secret_sealed,
      secret_rotated_at: existing.secret_rotated_at,
    };
  }
  if (replaced === null) return { secret_sealed: sealed, previous_secret_sealed: null, secret_rotated_at: null };
  return { secret_sealed: sealed, previous_secret_sealed: existing.secret_sealed, secret_rotated_at: now };
}

/** The secret columns of a job put again without a `secret`: unchanged, rotation window included. */
export function keptSecretColumns(existing: SecretColumns): SecretColumns {
  return {
    secret_sealed: existing.secret_sealed,
    previous_secret_sealed: existing.previous_secret_sealed,
    secret_rotated_at: existing.secret_rotated_at,
  };
}

/**
 * The secrets an attempt of `job` signs with at `now`: the current one, then
 * the replaced one while less than `graceMs` has passed since the change.
 * @throws Error when the current secret cannot be opened.
 */
export function signingSecrets(options: {
  secretBox: SecretBox;
  job: Pick<JobRow, 'id'> & SecretColumns;
  now: number;
  graceMs: number;
}): string[] {
  const { secretBox, job, now, graceMs } = options;
  const context = secretContext(job.id);
  const current = secretBox.open({ sealed: job.secret_sealed, context });
  const inGrace = job.previous_secret_sealed !== null && job.secret_rotated_at !== null && now - Number(job.secret_rotated_at) < graceMs;
  if (!inGrace || job.previous_secret_sealed === null) return [current];
  const previous = openOrNull(secretBox, job.previous_secret_sealed, context);
  return previous === null ? [current] : [current, previous];
}

/**
 * Forgets replaced secrets whose grace window has ended (they sign nothing
 * any more), so that an old secret is not kept, and resealed, for ever.
 * @returns how many jobs had one.
 */
export function forgetReplacedSecrets(knex: Knex, now: number, graceMs: number): Promise<number> {
  return knex(JOBS)
    .whereNotNull('previous_secret_sealed')
    .where('secret_rotated_at', '<=', now - graceMs)
    .update({ previous_secret_sealed: null, secret_rotated_at: null });
}
