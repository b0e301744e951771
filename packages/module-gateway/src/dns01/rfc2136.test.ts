import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { acmeToolsAvailable } from '../test-support/acme-tools.js';
import { type KnotServer, startKnot } from '../test-support/knot.js';
import { createTxtLookup } from '../txt-lookup.js';
import { exchangeDnsMessage, parseDnsServer } from './dns-transport.js';
import { buildTxtUpdate, responseCode } from './dns-update-message.js';
import { createRfc2136DnsProvider, DnsUpdateError } from './rfc2136-provider.js';
import { signTsig, verifyTsigResponse } from './tsig.js';

const acmeTools = acmeToolsAvailable('RFC 2136 + TSIG against Knot DNS');
describe.runIf(acmeTools)('RFC 2136 + TSIG against Knot DNS (issue #8)', () => {
  let knot: KnotServer;
  const lookup = () => createTxtLookup({ servers: [knot.server] });
  const provider = (overrides: Record<string, unknown> = {}) =>
    createRfc2136DnsProvider({ server: knot.server, keyName: knot.key.name, keySecret: knot.key.secret, ...overrides });

  beforeAll(async () => {
    knot = await startKnot({ zone: 'gw.test' });
  });
  afterAll(async () => {
    await knot?.stop();
  });

  it('adds and removes single TXT values, leaving the others at the name', async () => {
    const name = '_acme-challenge.app.gw.test';
    const dns = provider();
    await dns.addTxt({ name, value: 'first' });
    await dns.addTxt({ name, value: 'second' });
    await dns.addTxt({ name, value: 'second' });
    expect(await lookup().lookup(name)).toEqual({ ok: true, values: expect.arrayContaining(['first', 'second']) });
    await dns.removeTxt({ name, value: 'first' });
    expect(await lookup().lookup(name)).toEqual({ ok: true, values: ['second'] });
    await dns.removeTxt({ name, value: 'first' });
    await dns.removeTxt({ name: `${name}.`, value: 'second' });
    expect(await lookup().lookup(name)).toEqual({ ok: true, values: [] });
  });

  it('finds the zone with an SOA query, or uses the configured one', async () => {
    await provider({ zone: 'gw.test.' }).addTxt({ name: 'deep.below.gw.test', value: 'configured' });
    await provider().addTxt({ name: 'other.below.gw.test', value: 'discovered' });
    expect(await lookup().lookup('deep.below.gw.test')).toEqual({ ok: true, values: ['configured'] });
    expect(await lookup().lookup('other.below.gw.test')).toEqual({ ok: true, values: ['discovered'] });
    await expect(provider({ zone: 'gw.test' }).addTxt({ name: 'x.elsewhere.test', value: 'v' })).rejects.toThrow(
      /not in the configured zone/,
    );
    await expect(provider().addTxt({ name: 'x.elsewhere.test', value: 'v' })).rejects.toThrow(/gave no SOA.*REFUSED/);
  });

  it('keeps values longer than one 255-byte TXT string intact', async () => {
    const value = randomBytes(300).toString('base64url');
    await provider().addTxt({ name: 'long.gw.test', value });
    expect(await lookup().lookup('long.gw.test')).toEqual({ ok: true, values: [value] });
  });

  it('reports the TSIG error when the server refuses the key or the secret', async () => {
    const wrongSecret = provider({ keySecret: randomBytes(32).toString('base64') }).addTxt({ name: 'x.gw.test', value: 'v' });
    await expect(wrongSecret).rejects.toThrow(/NOTAUTH.*BADSIG/);
    await expect(wrongSecret).rejects.toBeInstanceOf(DnsUpdateError);
    await expect(provider({ keyName: 'unknown-key.' }).addTxt({ name: 'x.gw.test', value: 'v' })).rejects.toThrow(/BADKEY/);
    await expect(provider({ keyAlgorithm: 'hmac-sha512' }).addTxt({ name: 'x.gw.test', value: 'v' })).rejects.toThrow(/NOTAUTH/);
    expect(await lookup().lookup('x.gw.test')).toEqual({ ok: true, values: [] });
  });

  it('verifies the signature of the server’s answer and detects tampering', async () => {
    const key = { name: knot.key.name, algorithm: 'hmac-sha256' as const, secret: Buffer.from(knot.key.secret, 'base64') };
    const signed = signTsig({
      message: buildTxtUpdate({ zone: 'gw.test', changes: [{ action: 'add', name: 't.gw.test', value: 'v', ttl: 60 }] }),
      key,
    });
    const response = await exchangeDnsMessage({ server: parseDnsServer(knot.server), message: signed.message });
    expect(responseCode(response)).toBe('NOERROR');
    expect(() => verifyTsigResponse({ response, requestMac: signed.mac, key })).not.toThrow();
    const tampered = Buffer.from(response);
    tampered.writeUInt16BE(tampered.readUInt16BE(2) ^ 0x0400, 2);
    expect(() => verifyTsigResponse({ response: tampered, requestMac: signed.mac, key })).toThrow(/does not verify/);
    expect(() => verifyTsigResponse({ response, requestMac: Buffer.alloc(32), key })).toThrow(/does not verify/);
    expect(() => verifyTsigResponse({ response, requestMac: signed.mac, key: { ...key, secret: randomBytes(32) } })).toThrow(
      /does not verify/,
    );
    expect(() => verifyTsigResponse({ response, requestMac: signed.mac, key, now: Math.floor(Date.now() / 1000) + 3600 })).toThrow(/fudge/);
  });

  it('refuses invalid options without echoing the secret', () => {
    const secret = 'c2hvcnQ=';
    expect(() => createRfc2136DnsProvider({ server: 'nope:99999', keyName: 'k.', keySecret: secret })).toThrow(/host:port/);
    try {
      createRfc2136DnsProvider({ server: '127.0.0.1:53', keyName: 'k.', keySecret: secret });
      expect.unreachable();
    } catch (error) {
      expect(String(error)).toMatch(/at least 16 bytes/);
      expect(String(error)).not.toContain(secret);
    }
  });
});
