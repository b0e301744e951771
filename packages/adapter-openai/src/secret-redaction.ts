/** Placeholder that replaces a secret in text meant for people. */
const REDACTED = '[redacted]';
/** OpenAI-style keys (`sk-…`, `sk-proj-…`), including the masked forms OpenAI echoes back in its errors. */
const OPENAI_KEY_PATTERN = /\bsk-[\w*.-]{3,}/g;

/**
 * Removes `secret` (an API key) and anything shaped like an OpenAI key from
 * `text`, so that server error bodies can be quoted in error messages.
 */
export function redactSecret(text: string, secret: string | undefined): string {
  const withoutSecret = secret === undefined || secret === '' ? text : text.split(secret).join(REDACTED);
  return withoutSecret.replace(OPENAI_KEY_PATTERN, REDACTED);
}

/** `url` without user name, password, query or fragment: safe to print. */
export function displayUrl(url: URL): string {
  return `${url.protocol}//${url.host}${url.pathname}`;
}
