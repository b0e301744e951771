export { defaultModules } from '@agentinfra/modules';
export { openAdapters, openDatabase, openEmbedder } from './adapters.js';
export { CliError } from './cli-error.js';
export { createProgram, main } from './program.js';
export { buildKernel, type ConfiguredKernel } from './server.js';
