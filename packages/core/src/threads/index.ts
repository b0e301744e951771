export * from './background-priority.js';
export * from './worker-script.js';
