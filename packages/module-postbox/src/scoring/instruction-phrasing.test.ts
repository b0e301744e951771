import { readFileSync } from 'node:fs';
import { seededRandom } from '@agentinfra/core/testing';
import randexp from 'randexp';
import { describe, expect, it } from 'vitest';
import { labelledSetFile } from '../build/injection-data.js';
import { findPhrases, PHRASE_FAMILIES, type PhraseAnchors, type PhraseMatch } from './instruction-phrasing.js';

/** randexp's CommonJS export is the class itself, which its type declarations describe as a `default` property. */
const RandExp = randexp as unknown as typeof randexp.default;

const familyIndex = (name: string) => PHRASE_FAMILIES.findIndex(([family]) => family === name);

// Review: `\n\s*` read the rest of a run of line breaks again from each of them, so 100,000 line breaks in one
// mail held the event loop for 17 s in findPhrases (any sender can reach it through the bundled MTA).
describe('phrase families on runs of line breaks', () => {
  it('skip only spaces and tabs after a line break, so no line break starts a rescan of the run', () => {
    for (const [name, pattern] of PHRASE_FAMILIES) expect(pattern.source, name).not.toMatch(/\\n\\s[*+]/);
  });

  it('still find a task or question that follows blank lines, ending where it did', () => {
    const text = 'thanks.\n\n \n\t write a poem about the sea.\n\n\n\nwhat is the capital of france?';
    const { counts, matches } = findPhrases(text);
    expect(counts.task_opening).toBe(1);
    expect(counts.question).toBe(1);
    expect(matches.find((match) => match.family === familyIndex('task_opening'))?.at).toBe(text.indexOf('write') + 'write'.length - 1);
    expect(matches.find((match) => match.family === familyIndex('question'))?.at).toBe(text.length - 1);
  });
});

/** Whether `text` (white space read as one space, as the anchor scanner reads it) satisfies one entry of `anchors`. */
const satisfies = (anchors: PhraseAnchors, text: string) => {
  const read = text.replace(/\s+/g, ' ');
  return anchors.some((entry) => entry.every((list) => list.some((anchor) => read.includes(anchor))));
};

// Review (#17): findPhrases skips a family whose anchor strings are not in the text; an anchor list that missed
// an alternative of the family's expression would silently drop its matches and change scores.
describe('phrase family anchors', () => {
  it('are held by every generated match of each family', () => {
    const random = seededRandom(17);
    for (const [name, pattern, anchors] of PHRASE_FAMILIES) {
      const generator = new RandExp(new RegExp(pattern.source));
      generator.randInt = (low, high) => low + Math.floor(random() * (1 + high - low));
      generator.max = 4;
      let matched = 0;
      for (let sample = 0; sample < 3_000; sample += 1) {
        const text = generator.gen();
        const match = new RegExp(pattern.source).exec(text);
        if (match === null) continue;
        matched += 1;
        expect(satisfies(anchors, match[0]), `${name}: ${JSON.stringify(match[0])}`).toBe(true);
      }
      expect(matched, name).toBeGreaterThan(500);
    }
  });

  it('leave the matches of the labelled set exactly as running every expression does', () => {
    const { messages } = JSON.parse(readFileSync(labelledSetFile(), 'utf8')) as { messages: Array<{ subject: string; text: string }> };
    const texts = messages.map((message) => `${message.subject}\n${message.text}`.normalize('NFKC').toLowerCase());
    for (const text of texts) {
      const everyExpression: PhraseMatch[] = [];
      PHRASE_FAMILIES.forEach(([, pattern], family) => {
        for (const match of text.matchAll(new RegExp(pattern.source, 'g'))) {
          everyExpression.push({ family, at: match.index + Math.max(0, match[0].length - 1) });
        }
      });
      everyExpression.sort((a, b) => a.at - b.at);
      expect(findPhrases(text).matches).toEqual(everyExpression);
    }
    expect(texts.length).toBeGreaterThan(100);
  });

  it('skip the families whose strings a text does not hold', () => {
    expect(satisfies(PHRASE_FAMILIES[familyIndex('model_address')]?.[2] ?? [], 'the media is special, via social channels')).toBe(false);
    expect(findPhrases('an den   ki: bitte antworten').counts.model_address).toBe(1);
    expect(findPhrases('item 1: ok?\nitem 2: ok?').matches).toEqual([]);
  });
});
