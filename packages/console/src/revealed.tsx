import type { Child } from 'hono/jsx';
import { revealedText, revealInvisible, type TextSegment } from './reveal-text.js';

/** A run hidden from readers in the original, shown marked: a `hidden:` tag, then the text with its `[U+XXXX]` markers. */
function HiddenMark(props: { text: string }) {
  return (
    <mark class="hidden-text" title="Hidden from human readers in the original">
      <span class="tag">hidden:</span>
      {props.text}
    </mark>
  );
}

/**
 * Caller-supplied text segments as text nodes, never as HTML: hidden
 * segments and every invisible or control character (escape, backspace,
 * bell, bidi overrides, zero-width …) shown as marked `[U+XXXX]` markers,
 * so none of them can change what the operator sees. `visible` renders the
 * other parts (default: as they are), e.g. with line-break opportunities.
 */
export function RevealedSegments(props: { segments: readonly TextSegment[]; visible?: (text: string) => Child }) {
  return (
    <>
      {props.segments.flatMap((segment) =>
        segment.hidden
          ? [<HiddenMark text={revealedText(segment.text)} />]
          : revealInvisible(segment.text).map((part) =>
              part.hidden ? <HiddenMark text={part.text} /> : props.visible ? props.visible(part.text) : part.text,
            ),
      )}
    </>
  );
}

/**
 * Caller-supplied text (a memory, a subject, a name, an error) the way every
 * console page shows it: see {@link RevealedSegments}. For attributes and
 * other plain strings use `revealedText`, which writes the same markers.
 */
export function Revealed(props: { text: string; visible?: (text: string) => Child }) {
  return <RevealedSegments segments={[{ text: props.text, hidden: false }]} visible={props.visible} />;
}
