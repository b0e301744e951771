import { createHash } from 'node:crypto';
import { runNodeModule, threadNiceValues, threadsNicedSince } from '@agentinfra/core/testing';
import { BACKGROUND_THREAD_NICE } from '@agentinfra/core/threads';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { createMimeParserPool } from './mime-parser-pool.js';
import { createSharedBytes } from './smtp/shared-bytes.js';

// Hashing and parsing must happen in the worker threads: on this (the main) thread, hashing fails.
vi.mock('node:crypto', async (original) => ({
  ...(await original<typeof import('node:crypto')>()),
  createHash: () => {
    throw new Error('hashed on the main thread');
  },
}));

const mime = ['From: a@sender.test', 'To: b@postbox.test', 'Subject: hello', 'Message-ID: <m1@sender.test>', '', 'body text', ''].join(
  '\r\n',
);

describe('createMimeParserPool', () => {
  const pool = createMimeParserPool({ threads: 1, maxQueue: 4, maxBodyBytes: 1_048_576 });
  afterAll(() => pool.close());

  it('hashes and parses a message held in shared memory in a worker thread', async () => {
    const collected = createSharedBytes(64 * 1024);
    collected.add(Buffer.from(mime));
    const raw = collected.bytes();
    const expected = (await vi.importActual<typeof import('node:crypto')>('node:crypto')).createHash('sha256').update(mime).digest('hex');
    expect(() => createHash('sha256')).toThrow('main thread');
    expect(await pool.digest(raw)).toBe(expected);
    const { message } = await pool.parse(raw);
    expect(message).toMatchObject({ from: 'a@sender.test', subject: 'hello', text: 'body text\n' });
    expect(message.headers['message-id']).toBe('<m1@sender.test>');
  });

  it.runIf(process.platform === 'linux')('parses at background priority, so the event loop gets the core first', async () => {
    const before = threadNiceValues();
    const background = createMimeParserPool({ threads: 1, maxQueue: 4, maxBodyBytes: 1_048_576 });
    try {
      await background.parse(Buffer.from(mime));
      expect(threadsNicedSince(before, BACKGROUND_THREAD_NICE)).toHaveLength(1);
      expect(threadNiceValues().get(process.pid)).toBe(before.get(process.pid));
    } finally {
      await background.close();
    }
  });

  it('parses in a process started with a V8 option such as --max-old-space-size (the build)', async () => {
    // Passing process.execArgv to a worker explicitly fails once it holds a V8 option; the build lets Node pass it on.
    const pool = new URL('../dist/mime-parser-pool.js', import.meta.url).href;
    const script = [
      `const { createMimeParserPool } = await import(${JSON.stringify(pool)});`,
      "const parser = createMimeParserPool({ threads: 1, maxQueue: 4, maxBodyBytes: 1_048_576, onError: (error) => console.log('error', error.message) });",
      `const { message } = await parser.parse(Buffer.from(${JSON.stringify(mime)}));`,
      "console.log('subject', message.subject);",
      'await parser.close();',
    ].join('\n');
    expect(await runNodeModule(script, ['--max-old-space-size=512'])).toBe('subject hello');
  });
});
