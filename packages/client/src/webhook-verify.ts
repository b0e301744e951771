import { AgentInfraError } from './errors.js';

/** What {@link verifyWebhook} checks. */
export interface VerifyWebhookInput {
  /**
   * The signing secret (`whsec_<base64>` or a raw string), or several: during
   * a rotation pass the new and the previous one, and a delivery signed with
   * either is accepted.
   */
  secret: string | readonly string[];
  /** The delivery's headers: a `Headers`, or Node's `IncomingHttpHeaders`-like record (names lower-case). */
  headers: Headers | Readonly<Record<string, string | readonly string[] | undefined>>;
  /** The exact request body as received (string or bytes), before any JSON parsing. */
  body: string | Uint8Array;
  /** Largest allowed distance between `webhook-timestamp` and now, in seconds (default 300). */
  toleranceSeconds?: number;
  /** The current time in ms since the epoch (default `Date.now()`). */
  now?: number;
}

const WEBHOOK_SECRET_PREFIX = 'whsec_';

function header(headers: VerifyWebhookInput['headers'], name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
  const value = (headers as Record<string, string | readonly string[] | undefined>)[name];
  return typeof value === 'string' ? value : value?.[0];
}

function failure(message: string): AgentInfraError {
  return new AgentInfraError({ status: 0, code: 'webhook_verification_failed', message });
}

function keyBytes(secret: string): Uint8Array {
  if (!secret.startsWith(WEBHOOK_SECRET_PREFIX)) return new TextEncoder().encode(secret);
  let binary: string;
  try {
    binary = atob(secret.slice(WEBHOOK_SECRET_PREFIX.length));
  } catch {
    throw failure('A whsec_ secret must be followed by standard base64.');
  }
  return Uint8Array.from(binary, (char) => char.charCodeAt(0));
}

async function signature(secret: string, signed: Uint8Array): Promise<string> {
  const key = await crypto.subtle.importKey('raw', keyBytes(secret), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  const mac = new Uint8Array(await crypto.subtle.sign('HMAC', key, signed));
  return btoa(String.fromCharCode(...mac));
}

/** Equal strings, in time that does not depend on where they differ. */
function equalConstantTime(a: string, b: string): boolean {
  let difference = a.length ^ b.length;
  for (let i = 0; i < a.length; i += 1) difference |= a.charCodeAt(i) ^ b.charCodeAt(i % Math.max(1, b.length));
  return difference === 0;
}

/**
 * Verifies a signed delivery (postbox webhooks, scheduler callbacks) as
 * Standard Webhooks specifies: HMAC-SHA256 with the secret's key over
 * `<webhook-id>.<webhook-timestamp>.<body>`, one of the space-separated
 * `v1,<base64>` values of `webhook-signature` matching, and the timestamp
 * within `toleranceSeconds` of now. Uses Web Crypto only (Node 20+, browsers);
 * needs no client.
 * @returns the body parsed as JSON.
 * @throws AgentInfraError (status 0, code `webhook_verification_failed`) when a
 *   header is missing, a `whsec_` secret is not base64, the timestamp is out of tolerance, no signature matches,
 *   or the body is not JSON.
 */
export async function verifyWebhook(input: VerifyWebhookInput): Promise<unknown> {
  const id = header(input.headers, 'webhook-id');
  const timestamp = header(input.headers, 'webhook-timestamp');
  const signatures = header(input.headers, 'webhook-signature');
  if (!id || !timestamp || !signatures) throw failure('Missing webhook-id, webhook-timestamp or webhook-signature.');
  const seconds = Number(timestamp);
  const tolerance = input.toleranceSeconds ?? 300;
  if (!/^\d+$/.test(timestamp) || Math.abs((input.now ?? Date.now()) / 1000 - seconds) > tolerance)
    throw failure(`webhook-timestamp is not within ${tolerance} s of now.`);
  const body = typeof input.body === 'string' ? input.body : new TextDecoder().decode(input.body);
  const signed = new TextEncoder().encode(`${id}.${timestamp}.${body}`);
  const offered = signatures
    .split(' ')
    .filter((entry) => entry.startsWith('v1,'))
    .map((entry) => entry.slice(3));
  const secrets = typeof input.secret === 'string' ? [input.secret] : input.secret;
  for (const secret of secrets) {
    const expected = await signature(secret, signed);
    if (offered.some((candidate) => equalConstantTime(candidate, expected))) {
      try {
        return JSON.parse(body);
      } catch {
        throw failure('The signed body is not JSON.');
      }
    }
  }
  throw failure('No webhook-signature matches the secret.');
}
