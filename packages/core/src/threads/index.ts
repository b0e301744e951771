export * from './background-priority.js';
export * from './worker-exec-argv.js';
