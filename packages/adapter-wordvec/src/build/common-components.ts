/** Mean and dominant directions of a set of word vectors, removed by {@link removeCommonComponents}. */
export interface CommonComponents {
  /** Mean vector of the fitted rows. */
  mean: Float64Array;
  /** Unit-length principal directions of the centred rows, strongest first. */
  directions: Float64Array[];
}

const POWER_ITERATIONS = 300;

/**
 * Fits "all-but-the-top" post-processing (Mu & Viswanath, 2018): the mean of
 * the first `rows` vectors and the top `count` principal directions of their
 * centred values, found by power iteration with deflation on the covariance.
 * These directions carry word frequency more than meaning, and average
 * sentence vectors all lean along them.
 * @param vectors row-major values, `dimensions` per row.
 */
export function fitCommonComponents(vectors: Float32Array, dimensions: number, rows: number, count: number): CommonComponents {
  const mean = new Float64Array(dimensions);
  for (let row = 0; row < rows; row += 1) {
    for (let i = 0; i < dimensions; i += 1) mean[i] = (mean[i] ?? 0) + (vectors[row * dimensions + i] ?? 0);
  }
  for (let i = 0; i < dimensions; i += 1) mean[i] = (mean[i] ?? 0) / rows;

  const covariance = new Float64Array(dimensions * dimensions);
  const centred = new Float64Array(dimensions);
  for (let row = 0; row < rows; row += 1) {
    for (let i = 0; i < dimensions; i += 1) centred[i] = (vectors[row * dimensions + i] ?? 0) - (mean[i] ?? 0);
    for (let i = 0; i < dimensions; i += 1) {
      const a = centred[i] ?? 0;
      for (let j = 0; j < dimensions; j += 1)
        covariance[i * dimensions + j] = (covariance[i * dimensions + j] ?? 0) + a * (centred[j] ?? 0);
    }
  }

  const directions: Float64Array[] = [];
  for (let k = 0; k < count; k += 1) {
    let direction = new Float64Array(dimensions).fill(1 / Math.sqrt(dimensions));
    for (let iteration = 0; iteration < POWER_ITERATIONS; iteration += 1) {
      const next = new Float64Array(dimensions);
      for (let i = 0; i < dimensions; i += 1) {
        let sum = 0;
        for (let j = 0; j < dimensions; j += 1) sum += (covariance[i * dimensions + j] ?? 0) * (direction[j] ?? 0);
        next[i] = sum;
      }
      for (const found of directions) subtractProjection(next, found);
      const length = Math.hypot(...next);
      if (length === 0) break;
      for (let i = 0; i < dimensions; i += 1) next[i] = (next[i] ?? 0) / length;
      direction = next;
    }
    directions.push(direction);
  }
  return { mean, directions };
}

/** Subtracts `components.mean` from every row of `vectors`, then its projection on each direction (in place). */
export function removeCommonComponents(vectors: Float32Array, dimensions: number, components: CommonComponents): void {
  const row = new Float64Array(dimensions);
  for (let start = 0; start < vectors.length; start += dimensions) {
    for (let i = 0; i < dimensions; i += 1) row[i] = (vectors[start + i] ?? 0) - (components.mean[i] ?? 0);
    for (const direction of components.directions) subtractProjection(row, direction);
    for (let i = 0; i < dimensions; i += 1) vectors[start + i] = row[i] ?? 0;
  }
}

function subtractProjection(vector: Float64Array, unit: Float64Array): void {
  let projection = 0;
  for (let i = 0; i < vector.length; i += 1) projection += (vector[i] ?? 0) * (unit[i] ?? 0);
  for (let i = 0; i < vector.length; i += 1) vector[i] = (vector[i] ?? 0) - projection * (unit[i] ?? 0);
}
