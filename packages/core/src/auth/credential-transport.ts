/**
 * Reads the bearer credential of a request (CONTRACT.md "Transport"):
 * `Authorization: Bearer <credential>`, or the same value in an `apikey`
 * header when `Authorization` is absent (Supabase clients send both).
 * @returns the credential, or `null` when none is sent.
 */
export function readCredential(headers: { get(name: string): string | null | undefined }): string | null {
  const authorization = headers.get('authorization');
  if (authorization) {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
    return match?.[1] ?? null;
  }
  const apikey = headers.get('apikey')?.trim();
  return apikey ? apikey : null;
}
