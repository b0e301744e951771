import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { FEATURE_NAMES } from './injection-features.js';
import { createTopicTable, type TopicTable } from './segment-topics.js';

/**
 * The local injection model: a logistic regression over the hand-written
 * signals of `injection-features.ts` and hashed word and character n-grams
 * (`text-ngrams.ts`), already calibrated so that its output is the score
 * (`score = sigmoid(bias + Σ signal weight·value + Σ weight of each distinct n-gram present)`).
 */
export interface InjectionModel {
  /** Name and version, reported as the scorer id (`local-v6`). */
  id: string;
  /** The n-gram table has `2^hashBits` entries. */
  hashBits: number;
  bias: number;
  /** One weight per hand-written signal, in `FEATURE_NAMES` order. */
  signalWeights: Float64Array;
  /** The weight of each n-gram hash bucket (0 for buckets the training data never filled). */
  ngramWeights: Float32Array;
  /** Word topic vectors for the topic features of `segment-topics.ts`; `null` for a model without them. */
  topics: TopicTable | null;
}

/** Word topic vectors as the trainer makes them (a {@link TopicTable} without its lookup). */
export type TopicVectors = Pick<TopicTable, 'hashes' | 'vectors' | 'dimensions'>;

/** Format tag of the model file. */
export const MODEL_FORMAT = 'agentinfra-injection-model/1';

/**
 * The model file (JSON): the n-gram weights are stored sparsely, as the
 * base64 of the LEB128 varint gaps between the sorted bucket indexes and the
 * base64 of one signed byte per weight (`weight = byte × ngramScale`).
 */
export const modelFileSchema = z.object({
  format: z.literal(MODEL_FORMAT),
  id: z.string().min(1).max(64),
  hashBits: z.int().min(8).max(22),
  bias: z.number(),
  signalWeights: z.record(z.string(), z.number()),
  ngramScale: z.number().positive(),
  ngramIndexes: z.base64(),
  ngramWeights: z.base64(),
  /**
   * Word topic vectors (optional): the base64 of each word's unigram hash
   * (uint32, little-endian), of one signed byte per value and of one
   * float32 scale per word (`value = byte × scale`), `topicDimensions` per word.
   */
  topics: z
    .object({
      dimensions: z.int().min(1).max(256),
      hashes: z.base64(),
      values: z.base64(),
      scales: z.base64(),
    })
    .optional(),
  /** How the model was trained and calibrated (documentation only; not read by the scorer). */
  training: z.record(z.string(), z.unknown()),
});
export type ModelFile = z.infer<typeof modelFileSchema>;

/** Path of the bundled model, `<package>/data/injection-model.json` (the same from `src/` and `dist/`). */
export function defaultModelFile(): string {
  return fileURLToPath(new URL('../../data/injection-model.json', import.meta.url));
}

/**
 * Decodes a model file.
 * @throws ZodError when the file does not have the {@link modelFileSchema} shape;
 *   Error when a signal weight is missing or the n-gram arrays do not match.
 */
export function decodeInjectionModel(json: unknown): InjectionModel {
  const file = modelFileSchema.parse(json);
  const signalWeights = new Float64Array(FEATURE_NAMES.length);
  FEATURE_NAMES.forEach((name, index) => {
    const weight = file.signalWeights[name];
    if (weight === undefined) throw new Error(`The injection model has no weight for the signal "${name}".`);
    signalWeights[index] = weight;
  });
  const size = 2 ** file.hashBits;
  const ngramWeights = new Float32Array(size);
  const gaps = Buffer.from(file.ngramIndexes, 'base64');
  const bytes = Buffer.from(file.ngramWeights, 'base64');
  let index = -1;
  let position = 0;
  for (let k = 0; k < bytes.length; k += 1) {
    let gap = 0;
    let shift = 0;
    let byte: number;
    do {
      if (position >= gaps.length) throw new Error('The injection model has fewer n-gram indexes than weights.');
      byte = gaps[position++] ?? 0;
      gap += (byte & 0x7f) * 2 ** shift;
      shift += 7;
    } while (byte & 0x80);
    index += gap;
    if (index >= size) throw new Error('The injection model has an n-gram index outside its table.');
    ngramWeights[index] = bytes.readInt8(k) * file.ngramScale;
  }
  if (position !== gaps.length) throw new Error('The injection model has more n-gram indexes than weights.');
  return {
    id: file.id,
    hashBits: file.hashBits,
    bias: file.bias,
    signalWeights,
    ngramWeights,
    topics: file.topics === undefined ? null : decodeTopicTable(file.topics),
  };
}

/**
 * The topic table of a model file's `topics` (see {@link modelFileSchema}).
 * @throws Error when its arrays do not match, or a hash or scale is invalid (see `createTopicTable`).
 */
export function decodeTopicTable(topics: NonNullable<ModelFile['topics']>): TopicTable {
  const hashBytes = Buffer.from(topics.hashes, 'base64');
  const values = Buffer.from(topics.values, 'base64');
  const scaleBytes = Buffer.from(topics.scales, 'base64');
  const words = hashBytes.length / 4;
  if (!Number.isInteger(words) || scaleBytes.length !== words * 4 || values.length !== words * topics.dimensions) {
    throw new Error('The injection model has topic arrays of different lengths.');
  }
  const hashes = new Uint32Array(words);
  const vectors = new Float32Array(values.length);
  for (let row = 0; row < words; row += 1) {
    hashes[row] = hashBytes.readUInt32LE(row * 4);
    const scale = scaleBytes.readFloatLE(row * 4);
    if (!Number.isFinite(scale)) throw new Error('The injection model has a topic scale that is not a finite number.');
    for (let d = 0; d < topics.dimensions; d += 1) {
      const at = row * topics.dimensions + d;
      vectors[at] = values.readInt8(at) * scale;
    }
  }
  return createTopicTable(hashes, vectors, topics.dimensions);
}

/** Quantises topic vectors to one signed byte per value with a scale per word (largest |value| ÷ 127), as a model file's `topics`. */
export function encodeTopicVectors(topics: TopicVectors): NonNullable<ModelFile['topics']> {
  const { hashes, vectors, dimensions } = topics;
  const words = hashes.length;
  const hashBytes = Buffer.alloc(words * 4);
  const scaleBytes = Buffer.alloc(words * 4);
  const values = Buffer.alloc(words * dimensions);
  for (let row = 0; row < words; row += 1) {
    hashBytes.writeUInt32LE(hashes[row] ?? 0, row * 4);
    let largest = 0;
    for (let d = 0; d < dimensions; d += 1) largest = Math.max(largest, Math.abs(vectors[row * dimensions + d] ?? 0));
    const scale = largest > 0 ? largest / 127 : 1;
    scaleBytes.writeFloatLE(scale, row * 4);
    for (let d = 0; d < dimensions; d += 1)
      values.writeInt8(Math.round((vectors[row * dimensions + d] ?? 0) / scale), row * dimensions + d);
  }
  return { dimensions, hashes: hashBytes.toString('base64'), values: values.toString('base64'), scales: scaleBytes.toString('base64') };
}

/**
 * Encodes a model as a model file: n-gram weights are quantised to signed
 * bytes (`ngramScale` = largest |weight| ÷ 127) and those that round to 0
 * are left out; its topic vectors, if any, to signed bytes with a scale per
 * word (quantising already quantised vectors changes nothing, so a decoded
 * model encodes to the same file). A model with topic features is trained on
 * the quantised vectors (decode the encoded table), so that scoring sees what
 * training saw.
 */
export function encodeInjectionModel(model: InjectionModel, training: Record<string, unknown>): ModelFile {
  let largest = 0;
  for (const weight of model.ngramWeights) largest = Math.max(largest, Math.abs(weight));
  const scale = largest > 0 ? largest / 127 : 1;
  const gaps: number[] = [];
  const quantised: number[] = [];
  let previous = -1;
  model.ngramWeights.forEach((weight, index) => {
    const byte = Math.round(weight / scale);
    if (byte === 0) return;
    let gap = index - previous;
    previous = index;
    while (gap >= 0x80) {
      gaps.push((gap & 0x7f) | 0x80);
      gap = Math.floor(gap / 0x80);
    }
    gaps.push(gap);
    quantised.push(byte);
  });
  const round = (value: number) => Math.round(value * 10_000) / 10_000;
  return {
    format: MODEL_FORMAT,
    id: model.id,
    hashBits: model.hashBits,
    bias: round(model.bias),
    signalWeights: Object.fromEntries(FEATURE_NAMES.map((name, index) => [name, round(model.signalWeights[index] ?? 0)])),
    ngramScale: scale,
    ngramIndexes: Buffer.from(gaps).toString('base64'),
    ngramWeights: Buffer.from(Int8Array.from(quantised).buffer).toString('base64'),
    ...(model.topics === null ? {} : { topics: encodeTopicVectors(model.topics) }),
    training,
  };
}

let bundled: InjectionModel | null = null;

/**
 * The bundled model (`data/injection-model.json`), read and decoded once
 * per process (a few milliseconds; see bench/injection-eval.ts).
 * @throws Error when the file is missing or invalid (a broken install).
 */
export function bundledInjectionModel(): InjectionModel {
  bundled ??= decodeInjectionModel(JSON.parse(readFileSync(defaultModelFile(), 'utf8')));
  return bundled;
}
