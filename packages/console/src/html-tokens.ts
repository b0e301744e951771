/** One token of {@link htmlTokens}: a comment, a tag, or another `<…>` construct (a doctype, a stray `<`). */
export interface HtmlToken {
  /** Offset of its `<` in the HTML. */
  index: number;
  /** Offset just past its end. */
  end: number;
  /** The text between `<!--` and `-->` of a comment, else undefined. */
  comment?: string;
  /** `/` for a closing tag, `''` for an opening one; undefined for other tokens. */
  closing?: string;
  /** The tag name as written (`[A-Za-z][A-Za-z0-9-]*`); undefined for comments and other tokens. */
  name?: string;
  /** What follows the name up to the `>`. */
  attributes?: string;
}

/** A tag's `<`, optional `/` and name, read at one offset. */
const TAG_NAME = /<(\/?)([a-zA-Z][a-zA-Z0-9-]*)/y;

/**
 * The tokens of `html`, in order, as the global expression
 * `/<!--([\s\S]*?)-->|<(\/?)([a-zA-Z][a-zA-Z0-9-]*)([^>]*)>|<!?[^>]*>/g`
 * finds them (a comment up to the first `-->`; else from a `<` to the next
 * `>`), in time linear in the length of `html`: the expression itself reads
 * to the end of the text from every `<` that no `>` or `-->` follows (8.6 s
 * for 128 KiB of `<`). Here the next `>` and the next `-->` are searched
 * once each and kept until passed, and once no `>` follows, no later `<`
 * can start a token either.
 */
export function* htmlTokens(html: string): Generator<HtmlToken> {
  let nextGt = -2;
  let nextCommentEnd = -2;
  for (let at = html.indexOf('<'); at !== -1; at = html.indexOf('<', at)) {
    if (nextCommentEnd !== -1 && html.startsWith('<!--', at)) {
      if (nextCommentEnd < at + 4) nextCommentEnd = html.indexOf('-->', at + 4);
      if (nextCommentEnd !== -1) {
        yield { index: at, end: nextCommentEnd + 3, comment: html.slice(at + 4, nextCommentEnd) };
        at = nextCommentEnd + 3;
        continue;
      }
    }
    if (nextGt !== -1 && nextGt <= at) nextGt = html.indexOf('>', at + 1);
    if (nextGt === -1) return;
    TAG_NAME.lastIndex = at;
    const tag = TAG_NAME.exec(html);
    yield tag
      ? { index: at, end: nextGt + 1, closing: tag[1], name: tag[2], attributes: html.slice(TAG_NAME.lastIndex, nextGt) }
      : { index: at, end: nextGt + 1 };
    at = nextGt + 1;
  }
}
