import { ConflictError, type Lock } from '@agentinfra/core';

/** How long one commit may hold its artifact (moving and hashing a large upload included); a crashed holder frees it then. */
export const COMMIT_LOCK_TTL_MS = 10 * 60_000;
/** How long a commit waits for another commit of the same artifact before answering 409. */
export const COMMIT_WAIT_MS = 60_000;
/** Pause between attempts to take a held artifact. */
const RETRY_MS = 100;

/**
 * Runs `work` holding the commit lock of `artifactId` (across replicas when
 * the lock port is Redis), waiting up to {@link COMMIT_WAIT_MS} for another
 * commit of it to finish: a client that retries a commit while the first
 * is still hashing then gets the first one's answer instead of "nothing
 * has been uploaded".
 * @param onReleaseFailure told when the lock store fails to release the lock
 *   (the commit's answer stands; the lock expires after {@link COMMIT_LOCK_TTL_MS}).
 * @throws ConflictError (409) when the other commit holds it past the wait.
 */
export async function withCommitLock<T>(
  lock: Lock,
  artifactId: string,
  work: () => Promise<T>,
  onReleaseFailure: (error: unknown) => void,
): Promise<T> {
  const key = `artifacts:commit:${artifactId}`;
  const deadline = Date.now() + COMMIT_WAIT_MS;
  for (;;) {
    const lease = await lock.tryAcquire({ key, ttlMs: COMMIT_LOCK_TTL_MS });
    if (lease) {
      try {
        return await work();
      } finally {
        await lease.release().catch(onReleaseFailure);
      }
    }
    if (Date.now() >= deadline) throw new ConflictError(`Another commit of artifact "${artifactId}" is still running; try again.`);
    await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
  }
}
