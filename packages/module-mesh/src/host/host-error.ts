/**
 * A failure of the agent host's side of agent-mesh, with the exit code a
 * command-line wrapper should end with: 2 for bad options or local state the
 * user must fix, 1 for failures at run time.
 */
export class MeshHostError extends Error {
  override name = 'MeshHostError';
  constructor(
    message: string,
    readonly exitCode: 1 | 2,
  ) {
    super(message);
  }
}

/** Failure of a call to the server, with the HTTP status (0 when the server could not be reached). */
export class MeshCallError extends MeshHostError {
  override name = 'MeshCallError';
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message, 1);
  }

  /** Whether retrying later may help (unreachable, 429 or 5xx), as opposed to a refusal that will not change. */
  get transient(): boolean {
    return this.status === 0 || this.status === 429 || this.status >= 500;
  }
}
