import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { runNodeModule } from '../testing/node-module.js';
import { createJsonParsePool, JSON_PARSE_THREADS } from './json-parse-pool.js';
import { parseJsonBytes } from './json-text.js';

/** `text` as UTF-8 in a view of a new `SharedArrayBuffer`. */
function shared(text: string): Uint8Array {
  const bytes = Buffer.from(text);
  const view = new Uint8Array(new SharedArrayBuffer(bytes.byteLength));
  view.set(bytes);
  return view;
}

/** A thread script (CommonJS) with `source` as its body, in a fresh folder. */
function script(source: string): string {
  const file = join(mkdtempSync(join(tmpdir(), 'agentinfra-json-pool-')), 'worker.cjs');
  writeFileSync(file, source);
  return file;
}

describe('createJsonParsePool', () => {
  it('starts no thread before the first body, then parses in one', async () => {
    const pool = createJsonParsePool();
    expect(pool.threads).toBe(0);
    expect(await pool.parse(shared('{"a":[1,"b"]}'))).toStrictEqual({ ok: true, value: { a: [1, 'b'] } });
    expect(pool.threads).toBe(1);
    expect(await pool.parse(shared('{"a":'))).toStrictEqual({ ok: false, failure: 'not_json' });
    await pool.close();
  });

  it(`runs at most ${JSON_PARSE_THREADS} threads and queues the other bodies`, async () => {
    const pool = createJsonParsePool();
    const texts = Array.from({ length: 9 }, (_, index) => JSON.stringify({ index, text: 'x'.repeat(200_000 * index) }));
    const outcomes = await Promise.all(texts.map((text) => pool.parse(shared(text))));
    expect(pool.threads).toBeLessThanOrEqual(JSON_PARSE_THREADS);
    expect(outcomes).toStrictEqual(texts.map((text) => ({ ok: true, value: JSON.parse(text) })));
    await pool.close();
  });

  it('ends its threads on close, then parses on the event loop without starting one', async () => {
    const pool = createJsonParsePool({ filename: script('module.exports = () => new Promise(() => {});') });
    const pending = pool.parse(shared('[1,2]'));
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(pool.threads).toBe(1);
    await pool.close();
    expect(pool.threads).toBe(0);
    expect(await pending).toStrictEqual({ ok: true, value: [1, 2] });
    expect(await pool.parse(shared('[3]'))).toStrictEqual({ ok: true, value: [3] });
    expect(pool.threads).toBe(0);
  });

  it('parses on the event loop, from then on, once a thread dies holding a body', async () => {
    const onFailure = vi.fn();
    const pool = createJsonParsePool({ filename: script('module.exports = () => process.exit(7);'), onFailure });
    const bodies = ['{"a":1}', '[[[[1]]]]', '"\\u00e9"', '{"a":', `${'['.repeat(40)}${']'.repeat(40)}`].map(shared);
    const outcomes = await Promise.all(bodies.map((bytes) => pool.parse(bytes)));
    expect(outcomes).toStrictEqual(bodies.map((bytes) => parseJsonBytes(bytes)));
    expect(onFailure).toHaveBeenCalledTimes(1);
    expect(await pool.parse(shared('{"b":2}'))).toStrictEqual({ ok: true, value: { b: 2 } });
    expect(pool.threads).toBe(0);
    await pool.close();
    expect(onFailure).toHaveBeenCalledTimes(1);
  });

  it('parses on the event loop when a thread cannot start', async () => {
    const onFailure = vi.fn();
    const pool = createJsonParsePool({ filename: script("throw new Error('no such script');"), onFailure });
    expect(await pool.parse(shared('{"a":1}'))).toStrictEqual({ ok: true, value: { a: 1 } });
    expect(onFailure).toHaveBeenCalledWith(expect.stringContaining('no such script'));
    await pool.close();
  });

  it('parses in a thread when the process runs with a V8 option such as --max-old-space-size (the build)', async () => {
    // Passing process.execArgv to a worker explicitly fails once it holds a V8 option: the pool would parse on the event loop.
    const pool = new URL('../../dist/kernel/json-parse-pool.js', import.meta.url).href;
    const script = [
      `const { createJsonParsePool } = await import(${JSON.stringify(pool)});`,
      "const parser = createJsonParsePool({ onFailure: (reason) => console.log('failed', reason) });",
      "const outcome = await parser.parse(new TextEncoder().encode('[1,2]'));",
      "console.log(JSON.stringify(outcome), 'threads', parser.threads);",
      'await parser.close();',
    ].join('\n');
    expect(await runNodeModule(script, ['--max-old-space-size=512'])).toBe('{"ok":true,"value":[1,2]} threads 1');
  });
});
