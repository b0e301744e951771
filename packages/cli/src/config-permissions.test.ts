import { coreConfigSchema } from '@agentinfra/core';
import { defaultModules } from '@agentinfra/modules';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { CREDENTIAL_SETTINGS, credentialSettings } from './config-permissions.js';

/** The dotted path of every string setting (list items under the list's path) of a config section's JSON schema. */
function stringSettings(schema: Record<string, unknown>, path: readonly string[] = []): string[] {
  if (schema.type === 'string') return [path.join('.')];
  if (schema.type === 'array') return stringSettings((schema.items ?? {}) as Record<string, unknown>, path);
  const properties = Object.entries((schema.properties ?? {}) as Record<string, Record<string, unknown>>);
  const alternatives = [schema.anyOf, schema.oneOf, schema.allOf].flatMap((list) => (list ?? []) as Array<Record<string, unknown>>);
  return [
    ...properties.flatMap(([name, property]) => stringSettings(property, [...path, name])),
    ...alternatives.flatMap((alternative) => stringSettings(alternative, path)),
  ];
}

const sections = [
  { schema: coreConfigSchema, path: [] as string[] },
  ...defaultModules.flatMap((module) => (module.config ? [{ schema: module.config.schema, path: [module.config.key] }] : [])),
];
const allStringSettings = [
  ...new Set(sections.flatMap(({ schema, path }) => stringSettings(z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }), path))),
];

/** Settings named like a credential that are not one: a name, a prefix, an algorithm, a file path, an identifier. */
const NAMED_LIKE_CREDENTIALS = [
  'redisKeyPrefix',
  's3.accessKey',
  'gateway.keyType',
  'gateway.rfc2136.keyName',
  'gateway.rfc2136.keyAlgorithm',
  'postbox.smtp.tlsKeyFile',
];

// Review: the warning matched names with a regex (secret|password|token|apiKey, bridgeKey, masterKey) and string
// values only, so it missed previousMasterKeys (a list of old master keys) and gateway.eab.hmacKey.
describe('the credentials the config-permission warning names', () => {
  it('lists every string setting of the schemas named like a key, secret, password or token, or says why not', () => {
    const named = allStringSettings.filter((setting) => /key|secret|password|token|credential/i.test(setting.split('.').at(-1) ?? ''));
    expect(named.filter((setting) => !CREDENTIAL_SETTINGS.includes(setting) && !NAMED_LIKE_CREDENTIALS.includes(setting))).toEqual([]);
    expect(CREDENTIAL_SETTINGS.filter((setting) => !allStringSettings.includes(setting))).toEqual([]);
  });

  it('finds each of them, lists of keys included, and URLs with a password, but not an empty value', () => {
    const tree: Record<string, unknown> = {};
    for (const setting of CREDENTIAL_SETTINGS) {
      const path = setting.split('.');
      let node = tree;
      for (const name of path.slice(0, -1)) {
        node[name] ??= {};
        node = node[name] as Record<string, unknown>;
      }
      node[path.at(-1) as string] = setting === 'previousMasterKeys' ? ['', 'b2xkLWtleQ=='] : 'c2VjcmV0';
    }
    Object.assign(tree, {
      databaseUrl: 'postgres://agentinfra@db.example/agentinfra?sslmode=require&password=hunter2',
      redisUrl: 'redis://:hunter2@redis.example:6379',
      publicUrl: 'https://agentinfra.example',
      postbox: { ...(tree.postbox as object), relayUrl: 'smtp://mailer:hunter2@relay.example:587', mailDomain: 'example.com' },
      gateway: { ...(tree.gateway as object), dnsServers: ['1.1.1.1:53'], rfc2136: { keyName: 'acme.', keySecret: '' } },
    });
    expect(credentialSettings(tree).sort()).toEqual(
      [
        ...CREDENTIAL_SETTINGS.filter((setting) => setting !== 'gateway.rfc2136.keySecret'),
        'databaseUrl',
        'redisUrl',
        'postbox.relayUrl',
      ].sort(),
    );
  });
});
