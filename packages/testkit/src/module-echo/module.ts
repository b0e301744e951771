import { defineModule, provide } from '@agentinfra/core';
import { echoMigrations } from './migrations/index.js';
import { echoPermissions } from './permissions.js';
import { echoLogPort, greeterPort } from './ports.js';
import { echoRoutes } from './routes.js';
import { createEchoService, type EchoService } from './service.js';

/**
 * agent-echo: the smallest complete module, proving the module contract
 * (#12): two routes, one permission, one port it requires (`greeterPort`)
 * and one it provides (`echoLogPort`), one migration and one job, mounted
 * by a kernel with no edit to core, identity or the CLI.
 */
export const echoModule = defineModule({
  name: 'agent-echo',
  ports: ['sql', 'clock', greeterPort],
  migrations: echoMigrations,
  permissions: echoPermissions,
  service: (deps) => createEchoService(deps),
  routes: echoRoutes,
  jobs: [{ name: 'echo.hear', schedule: { every: 50 }, run: async ({ service }: { service: EchoService }) => service.hear() }],
  provides: [provide(echoLogPort, (service: EchoService) => ({ count: ({ agentId }) => service.count(agentId) }))],
});
