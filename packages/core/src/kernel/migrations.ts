import type { Knex } from 'knex';

/** One knex migration written with the schema builder so it runs on SQLite and PostgreSQL. */
export interface Migration {
  up(knex: Knex): Promise<void>;
  down(knex: Knex): Promise<void>;
}

/** A module's migrations by name; names sort in the order they apply (timestamp prefix). */
export type ModuleMigrations = Readonly<Record<string, Migration>>;

/** A knex migration source over an in-memory record of migrations. */
function sourceOf(migrations: ModuleMigrations): Knex.MigrationSource<string> {
  return {
    getMigrations: async () => Object.keys(migrations).sort(),
    getMigrationName: (name) => name,
    getMigration: async (name) => migrations[name] as Migration,
  };
}

/** Name of a module's migration table, e.g. `agent-memory` → `memory_migrations`. */
export function migrationTableOf(moduleName: string): string {
  return `${moduleName.replace(/^agent-/, '').replace(/[^a-z0-9]/g, '_')}_migrations`;
}

/**
 * Applies a module's pending migrations with its own knex migrations table.
 * Callers serialise concurrent processes with `SqlDatabase.exclusive`: knex's
 * own lock table is not safe when two processes create it at the same
 * instant (both may insert its row, and every later lock attempt fails).
 * @returns names of the migrations applied.
 */
export async function migrateLatest(options: { knex: Knex; table: string; migrations: ModuleMigrations }): Promise<string[]> {
  const config = { migrationSource: sourceOf(options.migrations), tableName: options.table };
  const [, applied] = (await options.knex.migrate.latest(config)) as [number, string[]];
  return applied;
}

/** Names of a module's migrations that are not applied yet. */
export async function pendingMigrations(options: { knex: Knex; table: string; migrations: ModuleMigrations }): Promise<string[]> {
  const [, pending] = (await options.knex.migrate.list({
    migrationSource: sourceOf(options.migrations),
    tableName: options.table,
  })) as [unknown[], Array<string | { file: string }>];
  return pending.map((item) => (typeof item === 'string' ? item : item.file));
}
