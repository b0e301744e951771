import { z } from 'zod';

/** An RFC 7807 problem document as ACME servers send them (RFC 8555 §6.7). */
export const acmeProblemSchema = z.looseObject({
  type: z.string(),
  detail: z.string().optional(),
  status: z.number().optional(),
  subproblems: z.array(z.unknown()).optional(),
});
export type AcmeProblem = z.infer<typeof acmeProblemSchema>;

/** RFC 8555 §6.7 `accountDoesNotExist`: the request was signed for an account the CA does not know (any more). */
export const ACCOUNT_DOES_NOT_EXIST = 'urn:ietf:params:acme:error:accountDoesNotExist';

/** RFC 8555 §6.7 `unauthorized`: the account may not do this, or (§7.3.6) it is deactivated or revoked. */
export const UNAUTHORIZED = 'urn:ietf:params:acme:error:unauthorized';

/** Problem types after which another attempt of the same order cannot succeed without a change by a person. */
const PERMANENT_TYPES = new Set(
  [
    'rejectedIdentifier',
    'unsupportedIdentifier',
    'malformed',
    'badCSR',
    'externalAccountRequired',
    'badSignatureAlgorithm',
    'unsupportedContact',
    'invalidContact',
  ].map((name) => `urn:ietf:params:acme:error:${name}`),
);

/** An ACME failure with the CA's problem document (when the CA sent one). */
export class AcmeProblemError extends Error {
  override readonly name = 'AcmeProblemError';
  constructor(
    message: string,
    readonly problem: AcmeProblem | null,
    options?: { cause?: unknown },
  ) {
    super(problem?.detail ? `${message}: ${problem.detail}` : message, options);
  }

  /** Whether retrying cannot help (the CA refuses the name, the CSR or the account setup). */
  get permanent(): boolean {
    return this.problem !== null && PERMANENT_TYPES.has(this.problem.type);
  }
}

/** `value` as a problem document, or `null` when it is not one. */
export function asAcmeProblem(value: unknown): AcmeProblem | null {
  const parsed = acmeProblemSchema.safeParse(value);
  return parsed.success ? parsed.data : null;
}
