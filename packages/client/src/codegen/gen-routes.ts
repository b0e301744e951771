import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { defaultModules } from '@agentinfra/modules';
import { formatRouteTable, ROUTE_TABLE_PATH } from './format-table.js';
import { renderRouteTable } from './route-table.js';

/** Writes src/generated/routes.ts from the route declarations of the modules `agentinfra serve` loads. */
const file = fileURLToPath(new URL(`../../../../${ROUTE_TABLE_PATH}`, import.meta.url));
writeFileSync(file, formatRouteTable(renderRouteTable(defaultModules)));
process.stdout.write(`wrote ${file}\n`);
