import type { AnyModule } from '@agentinfra/core';
import { artifactsModule } from '@agentinfra/module-artifacts';
import { gatewayModule } from '@agentinfra/module-gateway';
import { identityModule } from '@agentinfra/module-identity';
import { memoryModule } from '@agentinfra/module-memory';
import { meshModule } from '@agentinfra/module-mesh';
import { postboxModule } from '@agentinfra/module-postbox';
import { schedulerModule } from '@agentinfra/module-scheduler';

/** The modules `agentinfra serve` loads, in its order: the client is generated from their routes. */
export const servedModules: readonly AnyModule[] = [
  identityModule,
  memoryModule,
  artifactsModule,
  meshModule,
  gatewayModule,
  postboxModule,
  schedulerModule,
];
