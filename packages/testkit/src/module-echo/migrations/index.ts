import type { ModuleMigrations } from '@agentinfra/core';
import { echoMessages } from './20261124000000_echo_messages.js';

/** agent-echo migrations (table `echo_migrations`). */
export const echoMigrations: ModuleMigrations = { '20261124000000_echo_messages': echoMessages };
