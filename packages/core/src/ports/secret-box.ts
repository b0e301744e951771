/**
 * Authenticated encryption of small secrets at rest (agent secrets, PSKs,
 * ACME keys).
 *
 * Sealed values are self-describing strings `v<keyVersion>.<base64url(iv | ciphertext | tag)>`
 * so the master key can be rotated: new seals use the newest key, old seals
 * still open while their key version is configured.
 */
export interface SecretBox {
  /**
   * Encrypts `plaintext`. `context` is bound as additional authenticated data
   * (for example `secret:<agent_id>:<key>`), so a sealed value moved to
   * another row fails to open.
   */
  seal(options: { plaintext: string; context: string }): string;
  /**
   * Decrypts a value produced by {@link SecretBox.seal} with the same context.
   * @throws Error when the key version is unknown or authentication fails.
   */
  open(options: { sealed: string; context: string }): string;
  /** Whether `sealed` was made with an older key version than the current one. */
  needsReseal(sealed: string): boolean;
}
