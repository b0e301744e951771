import { z } from 'zod';

const TOKEN = '[A-Za-z0-9!#$&^_.+-]';
/** A quoted parameter value's characters (RFC 9110 qdtext without obs-text): tab, space and visible ASCII but `"` and `\`. */
const QDTEXT = '[\\t\\x20\\x21\\x23-\\x5B\\x5D-\\x7E]';

/**
 * A media type (RFC 6838 `type/subtype`, optional `; name=value` parameters),
 * at most 255 characters of visible ASCII, so that it is always a valid
 * `Content-Type` header value (no control characters, nothing outside ASCII).
 */
export const mimeSchema = z
  .string()
  .max(255)
  .regex(
    new RegExp(`^${TOKEN}{1,127}/${TOKEN}{1,127}([ \\t]*;[ \\t]*${TOKEN}+=(${TOKEN}+|"${QDTEXT}*"))*$`),
    'must be a media type like "application/pdf" or "text/plain; charset=utf-8"',
  );

/** A SHA-256 digest in hex, either case; normalised to lower case. */
export const sha256Schema = z
  .string()
  .regex(/^[0-9a-fA-F]{64}$/, 'must be 64 hexadecimal digits (SHA-256)')
  .transform((hex) => hex.toLowerCase());

/** An artifact id (`art_…`). */
export const artifactIdSchema = z
  .string()
  .min(1)
  .max(64)
  .regex(/^art_[A-Za-z0-9_-]+$/, 'must be an artifact id (art_…)');
