import { CliError } from '../cli-error.js';

/**
 * Checks the server URL of a command that calls a server (`mcp`) before
 * anything is sent, so that a typo is a usage error and not a failure at run time.
 * @param source the option or variable it came from (`--url`, `AGENTINFRA_URL`), named in the message.
 * @throws CliError (exit 2) when `value` is not an absolute http:// or https:// URL.
 */
export function checkServerUrl(value: string, source: string): void {
  const refuse = (what: string) =>
    new CliError(`${source}: "${value}" is not ${what}; expected the server's base URL, like http://127.0.0.1:8787.`, 2);
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw refuse('a URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw refuse('an http:// or https:// URL');
}
