import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { coreEnvBindings } from '@agentinfra/core';
import { defaultModules } from '@agentinfra/modules';
import { describe, expect, it } from 'vitest';

const readme = readFileSync(fileURLToPath(new URL('../../../README.md', import.meta.url)), 'utf8');

/** Every variable the server reads, with the config key it sets (`gateway.directoryUrl`). */
function configKeyOfVariable(): Map<string, string> {
  const keys = new Map(coreEnvBindings.map((binding) => [binding.name, binding.path.join('.')]));
  for (const module of defaultModules) {
    for (const binding of module.config?.env ?? []) keys.set(binding.name, [module.config?.key, ...binding.path].join('.'));
  }
  return keys;
}

/**
 * The README configuration table's rows as pairs of variable and config key, its shorthand spelled out:
 * `AGENTINFRA_S3_ENDPOINT`, `_BUCKET` → `AGENTINFRA_S3_BUCKET`; `s3.endpoint`, `.bucket` → `s3.bucket`.
 */
function documentedPairs(): Array<{ variable: string; key: string }> {
  const pairs: Array<{ variable: string; key: string }> = [];
  for (const line of readme.split('\n')) {
    const [, variablesCell, keysCell] = line.split('|');
    if (!variablesCell?.trim().startsWith('`AGENTINFRA_') || keysCell === undefined) continue;
    const variables = [...variablesCell.matchAll(/`(AGENTINFRA_[A-Z0-9_]+|_[A-Z0-9_]+)`/g)].map((match) => match[1] as string);
    const first = variables[0] as string;
    const prefix = /^AGENTINFRA_[A-Z0-9]+/.exec(first)?.[0] as string;
    const keys = [...keysCell.matchAll(/`([A-Za-z0-9.]+)`/g)].map((match) => match[1] as string);
    const firstKey = keys[0] as string;
    const section = firstKey.slice(0, firstKey.lastIndexOf('.'));
    expect(keys, line).toHaveLength(variables.length);
    variables.forEach((variable, index) => {
      const key = keys[index] as string;
      pairs.push({
        variable: variable.startsWith('_') ? `${prefix}${variable}` : variable,
        key: key.startsWith('.') ? `${section}${key}` : key,
      });
    });
  }
  return pairs;
}

// A user copies a key from this table into agentinfra.config.json: `embedder.*` once read as `embedder.url`.
describe("README's configuration table", () => {
  it('names, for every variable, the config key the server reads it into', () => {
    const known = configKeyOfVariable();
    const pairs = documentedPairs();
    expect(pairs.length).toBeGreaterThan(30);
    for (const { variable, key } of pairs) expect(`${variable} → ${known.get(variable)}`).toBe(`${variable} → ${key}`);
  });
});
