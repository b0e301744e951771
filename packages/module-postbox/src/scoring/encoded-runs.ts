/**
 * Runs of base64 characters and of hex digits long enough to carry an
 * encoded payload (`hidden-content.ts` decodes them).
 */

/** Character classes of the ASCII code units: bit 1 = base64 alphabet (`A–Z a–z 0–9 + /`), bit 2 = hex digit. */
const BASE64_CHAR = 1;
const HEX_CHAR = 2;
const CHAR_CLASSES = Uint8Array.from({ length: 128 }, (_, code) => {
  const char = String.fromCharCode(code);
  return (/[A-Za-z0-9+/]/.test(char) ? BASE64_CHAR : 0) | (/[0-9a-fA-F]/.test(char) ? HEX_CHAR : 0);
});

/** Shortest base64 and hex runs examined, and runs of each kind examined at most. */
export const MIN_BASE64_RUN = 40;
export const MIN_HEX_RUN = 32;
export const MAX_RUNS = 8;

/**
 * Distance between the characters probed: every run examined is at least
 * this long (hex digits are base64 characters too), so each one covers a
 * probed character.
 */
const PROBE_STRIDE = Math.min(MIN_BASE64_RUN, MIN_HEX_RUN);

/** The classes of the character at `at` of `text` (0 past its end and beyond ASCII). */
function classesAt(text: string, at: number): number {
  const code = text.charCodeAt(at);
  return code < 128 ? (CHAR_CLASSES[code] ?? 0) : 0;
}

/** Appends to `hex` the runs of at least {@link MIN_HEX_RUN} hex digits in `[start, end)` of `text`, while it has fewer than {@link MAX_RUNS}. */
function hexRunsIn(text: string, start: number, end: number, hex: string[]): void {
  let runStart = -1;
  for (let i = start; i <= end && hex.length < MAX_RUNS; i += 1) {
    if (i < end && classesAt(text, i) & HEX_CHAR) {
      if (runStart === -1) runStart = i;
    } else {
      if (runStart !== -1 && i - runStart >= MIN_HEX_RUN) hex.push(text.slice(runStart, i));
      runStart = -1;
    }
  }
}

/**
 * The (maximal) runs of at least {@link MIN_BASE64_RUN} base64 characters
 * and of at least {@link MIN_HEX_RUN} hex digits in `text`, the first
 * {@link MAX_RUNS} of each kind, in text order. Only every
 * {@link PROBE_STRIDE}th character is read, plus the base64 runs that
 * cover one (a hex run lies within a base64 run), so ordinary text costs
 * a fraction of a pass: a regular expression would rescan every word from
 * each of its letters.
 */
export function encodedRuns(text: string): { base64: string[]; hex: string[] } {
  const base64: string[] = [];
  const hex: string[] = [];
  const length = text.length;
  let probe = PROBE_STRIDE - 1;
  while (probe < length && (base64.length < MAX_RUNS || hex.length < MAX_RUNS)) {
    if ((classesAt(text, probe) & BASE64_CHAR) === 0) {
      probe += PROBE_STRIDE;
      continue;
    }
    let start = probe;
    while (start > 0 && classesAt(text, start - 1) & BASE64_CHAR) start -= 1;
    let end = probe + 1;
    while (end < length && classesAt(text, end) & BASE64_CHAR) end += 1;
    if (end - start >= MIN_BASE64_RUN && base64.length < MAX_RUNS) base64.push(text.slice(start, end));
    if (end - start >= MIN_HEX_RUN) hexRunsIn(text, start, end, hex);
    probe = end + PROBE_STRIDE;
  }
  return { base64, hex };
}
