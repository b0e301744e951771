import type { ConsoleApp, PageDeps } from '../context.js';
import { registerAgents } from './agents.js';
import { registerArtifacts } from './artifacts.js';
import { registerAudit } from './audit.js';
import { registerGateway } from './gateway.js';
import { registerMemory } from './memory.js';
import { registerMesh } from './mesh.js';
import { registerOverview } from './overview.js';
import { registerPostbox } from './postbox.js';
import { registerScheduler } from './scheduler.js';
import { registerSettings } from './settings.js';

/** Registers every page of the navigation. */
export function registerPages(app: ConsoleApp, deps: PageDeps): void {
  for (const register of [
    registerOverview,
    registerAgents,
    registerMemory,
    registerArtifacts,
    registerMesh,
    registerGateway,
    registerPostbox,
    registerScheduler,
    registerSettings,
    registerAudit,
  ]) {
    register(app, deps);
  }
}
