import type { Knex } from 'knex';
import { z } from 'zod';
import { InputError } from '../errors.js';
import { fieldIssues, unlistedIssuesNote } from '../kernel/request-parse.js';
import type { Clock } from '../ports/clock.js';
import { type SettingDefinition, settingsCatalog } from './catalog.js';

/** A setting as listed: its current value and a JSON Schema of allowed values. */
export interface SettingView {
  key: string;
  value: unknown;
  schema: Record<string, unknown>;
}

/** Service-wide settings stored in `core_settings`, read by modules through the `settings` port. */
export interface SettingsService {
  /** Every allowed setting with its current (or default) value and schema, sorted by key. */
  list(): Promise<SettingView[]>;
  /** Current value of `key`, or its default. @throws InputError for a key outside the allow-list. */
  get<T = unknown>(key: string): Promise<T>;
  /**
   * Validates and stores a value.
   * @throws InputError when the key is not in the allow-list or the value fails its schema.
   */
  set(options: { key: string; value: unknown }): Promise<{ key: string; value: unknown }>;
}

function definitionOf(key: string, catalog: readonly SettingDefinition[]): SettingDefinition {
  const definition = catalog.find((entry) => entry.key === key);
  if (!definition) {
    throw new InputError(`Unknown setting "${key}".`, { allowed: catalog.map((entry) => entry.key) });
  }
  return definition;
}

/** Creates the settings service over the core table. */
export function createSettingsService(options: { knex: Knex; clock: Clock; catalog?: readonly SettingDefinition[] }): SettingsService {
  const catalog = options.catalog ?? settingsCatalog;
  const { knex, clock } = options;
  return {
    async list() {
      const rows = (await knex('core_settings').select('key', 'value')) as Array<{ key: string; value: string }>;
      const stored = new Map(rows.map((row) => [row.key, JSON.parse(row.value) as unknown]));
      return [...catalog]
        .sort((a, b) => a.key.localeCompare(b.key))
        .map((definition) => ({
          key: definition.key,
          value: stored.has(definition.key) ? stored.get(definition.key) : definition.default,
          schema: {
            ...(z.toJSONSchema(definition.schema) as Record<string, unknown>),
            description: definition.description,
            default: definition.default,
          },
        }));
    },
    async get<T>(key: string) {
      const definition = definitionOf(key, catalog);
      const row = (await knex('core_settings').select('value').where({ key }).first()) as { value: string } | undefined;
      return (row ? JSON.parse(row.value) : definition.default) as T;
    },
    async set({ key, value }) {
      const definition = definitionOf(key, catalog);
      const parsed = definition.schema.safeParse(value);
      if (!parsed.success) {
        throw new InputError(`Invalid value for setting "${key}"${unlistedIssuesNote(parsed.error)}.`, {
          fields: fieldIssues(parsed.error, ['value']),
        });
      }
      const now = clock.now();
      await knex('core_settings')
        .insert({ key, value: JSON.stringify(parsed.data), updated_at: now })
        .onConflict('key')
        .merge({ value: JSON.stringify(parsed.data), updated_at: now });
      return { key, value: parsed.data };
    },
  };
}
