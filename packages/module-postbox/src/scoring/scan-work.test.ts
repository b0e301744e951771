import { afterEach, describe, expect, it, vi } from 'vitest';
import { findHiddenContent, HIDDEN_CLOSE_SEARCH_BUDGET, HIDDEN_CONTENT_BUDGET } from './hidden-content.js';
import { HTML_SEARCH_BUDGET, htmlOnlyText } from './html-only-text.js';

/**
 * The work of the HTML scans on hostile input, counted (characters the
 * searches read) rather than timed. Before these bounds, 200 KB of
 * `<script>` took ~0.7 s in `explain()` and a long word followed by a run of
 * its letter ~0.17 s for 60 KB; now a few milliseconds.
 */
afterEach(() => {
  vi.restoreAllMocks();
});

const nativeExec = RegExp.prototype.exec;
/** Sources of the close patterns (matched by source: a regular expression here would call the spied `exec`). */
const CLOSE_SOURCES = new Set(['head', 'title', 'style', 'script', 'template'].map((name) => `<\\/${name}\\s*>`));
const nativeIndexOf = String.prototype.indexOf;

/** Characters read by the searches for `</head>`, `</script>` … while `run` runs. */
function closeSearchReads(run: () => void): number {
  let read = 0;
  vi.spyOn(RegExp.prototype, 'exec').mockImplementation(function (this: RegExp, input: string) {
    const from = this.lastIndex;
    const found = nativeExec.call(this, input);
    if (CLOSE_SOURCES.has(this.source)) read += (found ? found.index : input.length) - from;
    return found;
  });
  run();
  vi.restoreAllMocks();
  return read;
}

describe('HTML scans stay linear', () => {
  it('searches for the close of unshown elements once per stretch of HTML, however many opens', () => {
    for (const html of ['<head>'.repeat(10_000), '<script>'.repeat(8_000), `${'<head>'.repeat(10_000)}</head>visible`]) {
      let shown = '';
      const read = closeSearchReads(() => {
        shown = findHiddenContent('hello', html).htmlShownText;
      });
      expect(read).toBeLessThanOrEqual(html.length);
      expect(shown.trim()).toBe(html.endsWith('visible') ? 'visible' : '');
    }
    // Normal HTML reads as before: each element's content left out, an unclosed one kept.
    const shown = findHiddenContent(
      'hello',
      '<head><title>T</title><style>p{}</style></head><p>one</p><script>x()</script><p>two</p><template>t</template>three<script>four',
    ).htmlShownText;
    expect(shown.replace(/\s+/g, ' ').trim()).toBe('one two three four');
  });

  it('charges the search for an HTML line in the text what it reads', () => {
    // A long word, then a run of its letter: the word occurs at nearly every position of the run.
    const word = 'a'.repeat(20_000);
    const text = `z ${word} ${'a'.repeat(40_000)}`;
    const shownHtml = `${word} z`;
    let read = 0;
    vi.spyOn(String.prototype, 'indexOf').mockImplementation(function (this: string, search: string, position?: number) {
      const at = nativeIndexOf.call(this, search, position);
      if (this === text) read += (at === -1 ? this.length : at) - (position ?? 0) + search.length;
      return at;
    });
    const added = htmlOnlyText(text, shownHtml);
    vi.restoreAllMocks();
    expect(added).toBe(shownHtml);
    expect(read).toBeLessThanOrEqual(HTML_SEARCH_BUDGET + 2 * shownHtml.length + text.length);
  });
});

/** Characters the searches for the close of hidden elements (`</tag`) may read while `run` runs: the length of the strings searched. */
function closeSearchChars(run: () => void): number {
  let read = 0;
  vi.spyOn(String.prototype, 'indexOf').mockImplementation(function (this: string, search: string, position?: number) {
    if (typeof search === 'string' && search.startsWith('</')) read += this.length - (position ?? 0);
    return nativeIndexOf.call(this, search, position);
  });
  run();
  vi.restoreAllMocks();
  return read;
}

describe('hidden elements stay linear', () => {
  it('finds the content of hidden elements as before: to the first close of the name, at most 2,000 characters on', () => {
    const found = findHiddenContent(
      'x',
      `<p hidden>one two three</p><p>shown words here</p><p hidden>four five six <pre>seven</pre> eight</p><span hidden>nine ten eleven ${'z '.repeat(1_500)}</span> after`,
    );
    expect(found.hiddenElements).toBe(3);
    expect(found.hiddenText).toContain('one two three');
    // `</p` also closes at `</pre`, as `indexOf` found it.
    expect(found.hiddenText).toContain('four five six');
    expect(found.hiddenText).not.toContain('eight');
    expect(found.htmlShownText).toContain('shown words here');
    expect(found.htmlShownText).toContain('eight');
    // Content past 2,000 characters is shown.
    expect(found.htmlShownText).toContain('after');
    expect(found.htmlShownText).not.toContain('nine');
  });

  it('searches for closes about once per name, and a bounded amount for many names', () => {
    // Before: each unclosed element searched to the end (1 MiB: 15 s).
    const unclosed = '<p hidden>a b c '.repeat(20_000);
    const read = closeSearchChars(() => findHiddenContent('x', unclosed));
    expect(read).toBeLessThanOrEqual(2 * unclosed.length);
    const names = Array.from({ length: 20_000 }, (_, i) => `<t${i} hidden>a b `).join('');
    expect(closeSearchChars(() => findHiddenContent('x', names))).toBeLessThanOrEqual(HIDDEN_CLOSE_SEARCH_BUDGET + 4_000);
    // Past the budget an element is shown: its words are still read (as shown text).
    expect(findHiddenContent('x', names).htmlShownText).toContain('a b');
  });

  it('reads the content of nested hidden elements a bounded number of times', () => {
    // Each nested element's content is taken up to 2,000 characters on: 200,000 characters read 15 million.
    const nested = '<div style="display:none">'.repeat(40_000);
    const found = findHiddenContent('x', nested);
    expect(found.hiddenText.length).toBeLessThanOrEqual(HIDDEN_CONTENT_BUDGET + nested.length + 2 * 2_000);
    expect(found.hiddenElements).toBeGreaterThan(20);
  });
});

describe('stray angle brackets', () => {
  // A `<` that opens no tag is text: 200 KB of them took 16 s, each failed tag match scanning to the end.
  it('shows a < that opens no tag as text and still reads the tags around it', () => {
    const found = findHiddenContent('x', '<< 3 < 4 <b>bold</b> <p style="display:none">three hidden words here</p> <!-- open');
    expect(found.htmlShownText.replace(/\s+/g, ' ').trim()).toBe('<< 3 < 4 bold <!-- open');
    expect(found.hiddenElements).toBe(1);
    const flood = findHiddenContent('x', `${'<'.repeat(50_000)}<p>after</p>`);
    expect(flood.htmlShownText.replace(/\s+/g, ' ').trim()).toBe(`${'<'.repeat(50_000)} after`);
  });
});
