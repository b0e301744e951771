/**
 * Deterministic 384-dimensional unit vectors for the PostgreSQL memory
 * benchmarks, named by text so that an embedding server and the benchmark
 * derive the same vector from the same string without sharing memory:
 *
 * - `vec:<dataset>:<n>`: row n of a dataset; `q:<dataset>:<n>`: query n;
 * - `zero`: the zero vector (the memory module answers such a query with no hits, without searching);
 * - any other text: a random unit vector seeded by the text.
 *
 * Datasets: `random` (isotropic Gaussian directions) and `clustered`
 * ({@link CLUSTERS} Gaussian centres; a row is its centre plus Gaussian noise
 * of norm about {@link NOISE_NORM}: cosine ≈ 0.89 to its centre, ≈ 0.8 between two rows of a cluster; rows are
 * dealt to clusters round-robin, queries to pseudo-random clusters).
 */
import { seededRandom } from '../../packages/core/src/testing/seeded-random.js';
export const DIMENSIONS = 384;
export const CLUSTERS = 1_000;
export const NOISE_NORM = 0.5;
export type DatasetKind = 'random' | 'clustered';
export const DATASETS: readonly DatasetKind[] = ['random', 'clustered'];

/** A 32-bit seed mixing a stream salt and an index (murmur3's finaliser). */
function seedOf(salt: number, index: number): number {
  let h = Math.imul(index + 1, 0x9e3779b1) ^ salt;
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

/** `DIMENSIONS` standard normal values (Box–Muller) scaled by `scale`. */
function gaussian(seed: number, scale = 1): Float64Array {
  const random = seededRandom(seed);
  const values = new Float64Array(DIMENSIONS);
  for (let i = 0; i < DIMENSIONS; i++) {
    values[i] = scale * Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
  }
  return values;
}

function unit(values: Float64Array): Float32Array {
  let norm = 0;
  for (const value of values) norm += value * value;
  norm = Math.sqrt(norm);
  return Float32Array.from(values, (value) => (norm === 0 ? 0 : value / norm));
}

const SALT = { random: 0x1234_5678, clustered: 0x2468_ace0, centre: 0x0bad_cafe, query: 0x5eed_0001, text: 0x7e57_7e57 };
const centres = new Map<number, Float64Array>();

function centre(cluster: number): Float64Array {
  let found = centres.get(cluster);
  if (found === undefined) {
    found = gaussian(seedOf(SALT.centre, cluster), 1 / Math.sqrt(DIMENSIONS));
    centres.set(cluster, found);
  }
  return found;
}

function clusteredVector(cluster: number, noiseSeed: number): Float32Array {
  const values = gaussian(noiseSeed, NOISE_NORM / Math.sqrt(DIMENSIONS));
  const base = centre(cluster);
  for (let i = 0; i < DIMENSIONS; i++) values[i] = (values[i] ?? 0) + (base[i] ?? 0);
  return unit(values);
}

/** Row `index` of `dataset`, a unit vector. */
export function dataVector(dataset: DatasetKind, index: number): Float32Array {
  if (dataset === 'random') return unit(gaussian(seedOf(SALT.random, index)));
  return clusteredVector(index % CLUSTERS, seedOf(SALT.clustered, index));
}

/** Query `index` of `dataset`, a unit vector drawn like the rows but never equal to one. */
export function queryVector(dataset: DatasetKind, index: number): Float32Array {
  const seed = seedOf(SALT.query ^ (dataset === 'random' ? 0 : 0xffff), index);
  if (dataset === 'random') return unit(gaussian(seed));
  return clusteredVector(seedOf(SALT.centre ^ SALT.query, index) % CLUSTERS, seed);
}

export const dataText = (dataset: DatasetKind, index: number) => `vec:${dataset}:${index}`;
export const queryText = (dataset: DatasetKind, index: number) => `q:${dataset}:${index}`;

/** The vector a text stands for (see the module comment). */
export function vectorForText(text: string): Float32Array {
  if (text === 'zero') return new Float32Array(DIMENSIONS);
  const match = /^(vec|q):(random|clustered):(\d+)$/.exec(text);
  if (match) {
    const dataset = match[2] as DatasetKind;
    const index = Number(match[3]);
    return match[1] === 'vec' ? dataVector(dataset, index) : queryVector(dataset, index);
  }
  let hash = SALT.text;
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193);
  return unit(gaussian(hash >>> 0));
}

/** pgvector's text input for `vector`: each float32 as its exact double value. */
export function vectorLiteral(vector: Float32Array): string {
  return `[${vector.join(',')}]`;
}

/**
 * pgvector's binary input for `vector` (`vector_recv`): int16 dimensions,
 * int16 zero, then float32 values, all big-endian; the form the PostgreSQL
 * adapter sends its query vectors in.
 */
export function vectorBinary(vector: Float32Array): Buffer {
  const bytes = Buffer.alloc(4 + 4 * vector.length);
  bytes.writeInt16BE(vector.length, 0);
  for (const [i, value] of vector.entries()) bytes.writeFloatBE(value, 4 + 4 * i);
  return bytes;
}
