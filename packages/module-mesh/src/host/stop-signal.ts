import { setTimeout as sleep } from 'node:timers/promises';

/** Aborts on SIGINT/SIGTERM unless the caller passes its own signal. @returns the signal and a function removing the handlers. */
export function stopSignal(signal: AbortSignal | undefined): { signal: AbortSignal; release: () => void } {
  if (signal) return { signal, release: () => undefined };
  const controller = new AbortController();
  const stop = () => controller.abort();
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  return {
    signal: controller.signal,
    release: () => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
    },
  };
}

/** Waits `ms`; resolves `false` instead when `signal` aborts first. */
export async function waitOrStop(ms: number, signal: AbortSignal): Promise<boolean> {
  try {
    await sleep(ms, undefined, { signal });
    return true;
  } catch {
    return false;
  }
}
