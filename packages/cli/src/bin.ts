#!/usr/bin/env node
import { main } from './program.js';

// `agentinfra migrate | head -1`: once the reader is gone, further output has nowhere to go. Drop it quietly and
// let the command finish (a server keeps serving) instead of dying on an unhandled EPIPE with a stack trace.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE' && error.code !== 'ERR_STREAM_DESTROYED') throw error;
  });
}

const code = await main(process.argv.slice(2));
if (code !== 0) process.exit(code);
