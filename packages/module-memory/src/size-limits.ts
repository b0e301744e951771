import { PayloadTooLargeError } from '@agentinfra/core';

/**
 * Checks the UTF-8 size of a string field.
 * @param field name shown in the error, e.g. `text`.
 * @param limitBytes largest allowed size in bytes.
 * @throws PayloadTooLargeError (413 `payload_too_large`) when `value` is larger.
 */
export function assertMaxBytes(value: string, field: string, limitBytes: number): void {
  if (value.length <= limitBytes / 3) return;
  const bytes = Buffer.byteLength(value, 'utf8');
  if (bytes > limitBytes) throw new PayloadTooLargeError(`The ${field} is ${bytes} bytes; the limit is ${limitBytes} bytes.`);
}
