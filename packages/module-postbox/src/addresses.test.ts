import { describe, expect, it } from 'vitest';
import { bareAddress, isMailboxAddress, localPartProblem, namesAnotherAddress, parseMailboxes, senderAddress } from './addresses.js';

describe('RFC 5321 local parts', () => {
  it('accepts Dot-strings of atext up to 64 octets', () => {
    for (const local of ['alice', 'a.b.c', "o'brien", 'x+tag', 'ops-bot_2', '!#$%&*+/=?^_`{|}~-', 'a'.repeat(64)]) {
      expect(localPartProblem(local), local).toBeNull();
    }
  });

  it('refuses empty, dotted-wrong, quoted, too long and non-atext local parts', () => {
    for (const local of ['', '.a', 'a.', 'a..b', '"a b"', 'a'.repeat(65), 'a b', 'a@b', 'a,b', 'a(b)', 'ü', 'a\\b', 'a[b]']) {
      expect(localPartProblem(local), local).not.toBeNull();
    }
  });
});

describe('addresses', () => {
  it('checks mailbox addresses (dot-string or quoted local part, LDH domain or address literal)', () => {
    expect(isMailboxAddress('a@example.org')).toBe(true);
    expect(isMailboxAddress('"john doe"@example.org')).toBe(true);
    expect(isMailboxAddress('a@[192.0.2.1]')).toBe(true);
    expect(isMailboxAddress('a@-bad.example')).toBe(false);
    expect(isMailboxAddress('@example.org')).toBe(false);
    expect(isMailboxAddress('a@')).toBe(false);
  });

  it('parses address lists with display names and finds the bare sender', () => {
    expect(parseMailboxes('"Shop" <news@shop.example>, b@x.example')).toEqual([
      { name: 'Shop', address: 'news@shop.example' },
      { name: '', address: 'b@x.example' },
    ]);
    expect(parseMailboxes('not an address')).toBeNull();
    expect(bareAddress('Shop <News@Shop.Example>')).toBe('news@shop.example');
  });
});

describe('the sender address of a From value', () => {
  it('is the first valid addr-spec, never display-name text, and empty when there is none', () => {
    expect(senderAddress('"Shop" <News@Shop.Example>')).toBe('news@shop.example');
    expect(senderAddress('"ceo@bank.example" <x@evil.example>, "broken" <a..b@evil.example>')).toBe('x@evil.example');
    expect(senderAddress('<a..b@evil.example>, "CEO" <ceo@bank.example>')).toBe('ceo@bank.example');
    expect(senderAddress('team: a@x.example, b@y.example;')).toBe('a@x.example');
    expect(senderAddress('undisclosed-recipients:;')).toBe('');
    expect(senderAddress('Alice')).toBe('');
    expect(senderAddress('')).toBe('');
  });
});

describe('addresses run together', () => {
  it('tells a display name holding another address from one naming the mailbox itself or a person', () => {
    const named = (value: string) => (parseMailboxes(value) ?? []).map(namesAnotherAddress);
    expect(named('carol@x.example dave@y.example')).toEqual([true]);
    expect(named('a@x.example b@y.example c@z.example')).toEqual([true]);
    expect(named("'Carol@X.example' <carol@x.example>")).toEqual([false]);
    expect(named('Bob @ Work <bob@x.example>, Carol <carol@x.example>')).toEqual([false, false]);
    expect(named('carol@x.example (Carol)')).toEqual([false]);
    expect(named(`"'jane.doe@gmail.com' via golang-nuts" <golang-nuts@googlegroups.com>`)).toEqual([false]);
    expect(named('"Jane Doe (jane@old.example)" <jane@new.example>')).toEqual([false]);
  });
});
