/**
 * An error the CLI reports as one line on stderr and turns into an exit code:
 * 2 for usage and configuration problems, 1 for failures at run time.
 */
export class CliError extends Error {
  override readonly name = 'CliError';
  constructor(
    message: string,
    readonly exitCode: 1 | 2,
  ) {
    super(message);
  }
}
