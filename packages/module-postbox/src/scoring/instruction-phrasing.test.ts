import { describe, expect, it } from 'vitest';
import { findPhrases, PHRASE_FAMILIES } from './instruction-phrasing.js';

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
