import { seededRandom } from '@agentinfra/core/testing';
import { describe, expect, it } from 'vitest';
import { applyRules, type MailRule, matchesLike, ruleActionSchema, ruleMatchSchema } from './rules.js';

describe('like patterns', () => {
  it('treats % as any run of characters, everything else literally, case-insensitively, whole value', () => {
    expect(matchesLike('%@shop.example', 'News@Shop.Example')).toBe(true);
    expect(matchesLike('%@shop.example', 'news@shop.example.evil')).toBe(false);
    expect(matchesLike('a_b%', 'a_bc')).toBe(true);
    expect(matchesLike('a_b%', 'axbc')).toBe(false);
    expect(matchesLike('re: %(urgent)%', 'Re: call me (urgent) now')).toBe(true);
    expect(matchesLike('%', '')).toBe(true);
    expect(matchesLike('a.*b', 'a.*b')).toBe(true);
    expect(matchesLike('a.*b', 'axxb')).toBe(false);
    expect(matchesLike('ab%ba', 'aba')).toBe(false);
    expect(matchesLike('%ab%ab%', 'xabyab')).toBe(true);
    expect(matchesLike('%ab%ab%', 'xaby')).toBe(false);
  });

  it('agrees with the equivalent anchored regular expression on random patterns and values', () => {
    const random = seededRandom(5);
    const draw = (alphabet: string, length: number) =>
      Array.from({ length: Math.floor(random() * length) }, () => alphabet.charAt(Math.floor(random() * alphabet.length))).join('');
    for (let trial = 0; trial < 5_000; trial += 1) {
      const pattern = draw('aAb%.', 8);
      const value = draw('aAb.', 10);
      const source = pattern
        .split('%')
        .map((part) => part.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&'))
        .join('[\\s\\S]*');
      expect(matchesLike(pattern, value), `${pattern} ~ ${value}`).toBe(new RegExp(`^${source}$`, 'i').test(value));
    }
  });

  // #11: patterns were turned into regular expressions whose backtracking on `%a%a%…%b` took seconds.
  it('matches the longest hostile pattern against the longest subject at once', () => {
    const pattern = `${'%a'.repeat(255)}%b`;
    expect(pattern.length).toBeLessThanOrEqual(512);
    expect(ruleMatchSchema.safeParse({ subject_like: pattern }).success).toBe(true);
    expect(matchesLike(pattern, 'a'.repeat(16_384))).toBe(false);
    expect(matchesLike(pattern, `${'a'.repeat(16_384)}b`)).toBe(true);
  }, 5_000);
});

describe('rules', () => {
  const message = { from: 'orders@shop.example', to: 'alice@agents.test', subject: 'Your receipt' };

  it('runs in name order: later move_to wins, other actions add up, webhook targets collect', () => {
    const rules: MailRule[] = [
      { name: 'b', match: { subject_like: '%receipt%' }, actions: [{ move_to: 'receipts' }, { webhook: 'whk_1' }] },
      { name: 'a', match: { from_like: '%@shop.example' }, actions: [{ move_to: 'shopping' }, { mark_read: true }] },
      { name: 'c', match: { to_like: 'bob@%' }, actions: [{ quarantine: true }] },
    ];
    const outcome = applyRules(rules, message);
    expect(outcome.matched).toEqual(['a', 'b']);
    expect(outcome.folder).toBe('receipts');
    expect(outcome.markRead).toBe(true);
    expect(outcome.quarantine).toBe(false);
    expect(outcome.forceWebhooks).toEqual(new Set(['whk_1']));
    expect(applyRules([...rules, { name: 'd', match: {}, actions: [{ webhook: true }] }], message).forceWebhooks).toBe(true);
  });

  it('needs every given key to match', () => {
    const outcome = applyRules(
      [{ name: 'x', match: { from_like: '%@shop.example', subject_like: 'invoice%' }, actions: [{ quarantine: true }] }],
      message,
    );
    expect(outcome.matched).toEqual([]);
  });

  it('accepts exactly one key per action and only known match keys', () => {
    expect(ruleActionSchema.safeParse({ move_to: 'a', mark_read: true }).success).toBe(false);
    expect(ruleActionSchema.safeParse({ quarantine: false }).success).toBe(false);
    expect(ruleActionSchema.safeParse({ webhook: true }).success).toBe(true);
    expect(ruleMatchSchema.safeParse({ body_like: '%' }).success).toBe(false);
  });
});
