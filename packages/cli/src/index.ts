export { openAdapters, openDatabase, openEmbedder } from './adapters.js';
export { CliError } from './cli-error.js';
export { defaultModules } from './modules.js';
export { createProgram, main } from './program.js';
export { buildKernel, type ConfiguredKernel } from './server.js';
