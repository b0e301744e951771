import type { AnyModule } from '@agentinfra/core';
import { artifactsModule } from '@agentinfra/module-artifacts';
import { gatewayModule } from '@agentinfra/module-gateway';
import { identityModule } from '@agentinfra/module-identity';
import { memoryModule } from '@agentinfra/module-memory';
import { meshModule } from '@agentinfra/module-mesh';
import { postboxModule } from '@agentinfra/module-postbox';
import { schedulerModule } from '@agentinfra/module-scheduler';

/**
 * The modules `agentinfra serve` loads, in order (identity first: it
 * provides credentials and teams). The CLI serves them, the MCP reference
 * (docs/mcp.md) and the docs page tests document them: a new module is added
 * here and nowhere else (docs/architecture.md).
 */
export const defaultModules: readonly AnyModule[] = [
  identityModule,
  memoryModule,
  artifactsModule,
  meshModule,
  gatewayModule,
  postboxModule,
  schedulerModule,
];
