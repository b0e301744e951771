import type { Knex } from 'knex';
import { ConfigError } from '../config.js';
import { coreMigrations } from '../jobs/migrations.js';

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

/** One migrations table and the migrations this build has for it. */
export interface MigrationSet {
  /** `core` or the module's name. */
  name: string;
  table: string;
  migrations: ModuleMigrations;
}

/**
 * The migration sets of a server with `modules`: core's (the job queue,
 * settings and audit log, table `core_migrations`) first, then each module's.
 */
export function migrationSetsOf(modules: readonly { name: string; migrations: ModuleMigrations }[]): MigrationSet[] {
  return [
    { name: 'core', table: 'core_migrations', migrations: coreMigrations },
    ...modules.map((module) => ({ name: module.name, table: migrationTableOf(module.name), migrations: module.migrations })),
  ];
}

/** Names recorded in a module's migration table (none when the table does not exist yet). */
async function appliedMigrations(knex: Knex, table: string): Promise<string[]> {
  if (!(await knex.schema.hasTable(table))) return [];
  return ((await knex(table).select('name')) as Array<{ name: string }>).map((row) => row.name);
}

/**
 * Refuses a database that a newer build migrated: one whose migration table
 * records migrations this build does not have. Migrations are one-way (an
 * older build cannot know how to undo them); knex would report this as a
 * "corrupt migration directory".
 * @throws ConfigError naming the table and the unknown migrations: run the newer build, or restore a backup taken before the upgrade.
 */
export async function refuseNewerSchema(options: { knex: Knex; table: string; migrations: ModuleMigrations }): Promise<void> {
  const newer = (await appliedMigrations(options.knex, options.table)).filter((name) => !(name in options.migrations)).sort();
  if (newer.length === 0) return;
  const known = Object.keys(options.migrations).sort().at(-1) ?? 'none';
  throw new ConfigError(
    `The database was migrated by a newer agentinfra: ${options.table} records ${newer.join(', ')}, which this build does not know ` +
      `(its latest is ${known}). Migrations are one-way: run the newer build, or restore a backup taken before the upgrade.`,
  );
}

/**
 * Applies a module's pending migrations with its own knex migrations table.
 * Callers serialise concurrent processes with `SqlDatabase.exclusive`: knex's
 * own lock table is not safe when two processes create it at the same
 * instant (both may insert its row, and every later lock attempt fails).
 * @returns names of the migrations applied.
 * @throws ConfigError when a newer build migrated the database (see {@link refuseNewerSchema}).
 */
export async function migrateLatest(options: { knex: Knex; table: string; migrations: ModuleMigrations }): Promise<string[]> {
  await refuseNewerSchema(options);
  const config = { migrationSource: sourceOf(options.migrations), tableName: options.table };
  const [, applied] = (await options.knex.migrate.latest(config)) as [number, string[]];
  return applied;
}

/**
 * Names of a module's migrations that are not applied yet. Migrations a
 * newer build applied are not counted: a replica of the previous version
 * keeps serving (and stays ready) while a rolling upgrade migrates ahead of it.
 */
export async function pendingMigrations(options: { knex: Knex; table: string; migrations: ModuleMigrations }): Promise<string[]> {
  const applied = new Set(await appliedMigrations(options.knex, options.table));
  return Object.keys(options.migrations)
    .sort()
    .filter((name) => !applied.has(name));
}
