import { createHmac, timingSafeEqual } from 'node:crypto';

/** What a signed URL authorises: one method on one key until `expires`, with the fields bound to it. */
export interface SignedFields {
  method: 'PUT' | 'GET';
  key: string;
  /** Expiry, ms since the epoch. */
  expires: number;
  /** PUT: the exact body size in bytes. */
  size?: number;
  /** GET: the Content-Type to answer with. */
  type?: string;
  /** GET: the filename of the Content-Disposition to answer with. */
  filename?: string;
}

/** Query parameter names of a signed URL. */
export const SIGNED_PARAMS = { expires: 'expires', size: 'size', type: 'type', filename: 'filename', signature: 'signature' } as const;

/** The signed message: a JSON array, so no field value can be confused with a separator. */
function message(fields: SignedFields): string {
  return JSON.stringify([
    'agentinfra.blob-url.v1',
    fields.method,
    fields.key,
    fields.expires,
    fields.size ?? null,
    fields.type ?? null,
    fields.filename ?? null,
  ]);
}

/** HMAC-SHA256 (RFC 2104) of the fields with `secret`, base64url. */
export function signFields(secret: Uint8Array, fields: SignedFields): string {
  return createHmac('sha256', secret).update(message(fields)).digest('base64url');
}

/** Whether `signature` (base64url) is the HMAC of the fields; compared in constant time. */
export function verifyFields(secret: Uint8Array, fields: SignedFields, signature: string): boolean {
  const expected = createHmac('sha256', secret).update(message(fields)).digest();
  const given = Buffer.from(signature, 'base64url');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** The query string of a signed URL for `fields`. */
export function signedQuery(secret: Uint8Array, fields: SignedFields): string {
  const params = new URLSearchParams();
  params.set(SIGNED_PARAMS.expires, String(fields.expires));
  if (fields.size !== undefined) params.set(SIGNED_PARAMS.size, String(fields.size));
  if (fields.type !== undefined) params.set(SIGNED_PARAMS.type, fields.type);
  if (fields.filename !== undefined) params.set(SIGNED_PARAMS.filename, fields.filename);
  params.set(SIGNED_PARAMS.signature, signFields(secret, fields));
  return params.toString();
}

const DIGITS = /^\d{1,16}$/;

/**
 * Reads the signed fields of a request URL for `method` and `key`.
 * @returns the fields and the signature, or `null` when a parameter is missing or malformed.
 */
export function readSignedQuery(
  params: URLSearchParams,
  method: SignedFields['method'],
  key: string,
): { fields: SignedFields; signature: string } | null {
  const expires = params.get(SIGNED_PARAMS.expires);
  const signature = params.get(SIGNED_PARAMS.signature);
  const size = params.get(SIGNED_PARAMS.size);
  if (!expires || !DIGITS.test(expires) || !signature) return null;
  if (size !== null && !DIGITS.test(size)) return null;
  const fields: SignedFields = { method, key, expires: Number(expires) };
  if (size !== null) fields.size = Number(size);
  const type = params.get(SIGNED_PARAMS.type);
  if (type !== null) fields.type = type;
  const filename = params.get(SIGNED_PARAMS.filename);
  if (filename !== null) fields.filename = filename;
  return { fields, signature };
}
