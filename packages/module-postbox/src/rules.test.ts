import { describe, expect, it } from 'vitest';
import { applyRules, likePattern, type MailRule, ruleActionSchema, ruleMatchSchema } from './rules.js';

describe('like patterns', () => {
  it('treats % as any run of characters, everything else literally, case-insensitively, whole value', () => {
    expect(likePattern('%@shop.example').test('News@Shop.Example')).toBe(true);
    expect(likePattern('%@shop.example').test('news@shop.example.evil')).toBe(false);
    expect(likePattern('a_b%').test('a_bc')).toBe(true);
    expect(likePattern('a_b%').test('axbc')).toBe(false);
    expect(likePattern('re: %(urgent)%').test('Re: call me (urgent) now')).toBe(true);
    expect(likePattern('%').test('')).toBe(true);
  });
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
