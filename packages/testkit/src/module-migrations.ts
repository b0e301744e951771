import { type Migration, type ModuleMigrations, migrationTableOf, type SqlDatabase } from '@agentinfra/core';

/** The knex migrator's config (`migrate.latest`, `migrate.rollback`). */
type MigratorConfig = NonNullable<Parameters<SqlDatabase['knex']['migrate']['latest']>[0]>;

/**
 * The knex migrator config that runs a module's migrations as the kernel
 * does: in name order, recorded in the module's `<module>_migrations` table.
 * @param moduleName e.g. `agent-postbox`.
 */
export function moduleMigrator(moduleName: string, migrations: ModuleMigrations): MigratorConfig {
  return {
    tableName: migrationTableOf(moduleName),
    migrationSource: {
      getMigrations: async () => Object.keys(migrations).sort(),
      getMigrationName: (name: string) => name,
      getMigration: async (name: string) => migrations[name] as Migration,
    },
  };
}

/**
 * Applies a module's migrations, rolls every one back, and applies them
 * again on `db`, reading after each step which of `tables` exist.
 * @returns the tables present after each of the three steps, in `tables` order.
 */
export async function migrationRoundTrip(
  db: SqlDatabase,
  moduleName: string,
  migrations: ModuleMigrations,
  tables: readonly string[],
): Promise<string[][]> {
  const config = moduleMigrator(moduleName, migrations);
  const present = async () => {
    const found: string[] = [];
    for (const table of tables) if (await db.knex.schema.hasTable(table)) found.push(table);
    return found;
  };
  await db.knex.migrate.latest(config);
  const applied = await present();
  await db.knex.migrate.rollback(config, true);
  const rolledBack = await present();
  await db.knex.migrate.latest(config);
  return [applied, rolledBack, await present()];
}
