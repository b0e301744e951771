/**
 * `vector` scaled to unit (L2) length, as a new Float32Array. The VectorIndex
 * port promises unit vectors already; scaling again removes float32 rounding
 * drift, so a stored dot product or `1 − d²/2` of an L2 distance `d` is the
 * cosine similarity.
 * @param what names the vector in error messages, e.g. `query vector`.
 * @throws RangeError when the length is not `dimensions`, a component is not
 *   finite, or the vector is all zeros (cosine similarity is undefined).
 */
export function toUnitVector(vector: Float32Array, dimensions: number, what: string): Float32Array {
  if (vector.length !== dimensions) {
    throw new RangeError(`${what} has ${vector.length} dimensions; this index holds ${dimensions}`);
  }
  let squares = 0;
  for (let i = 0; i < dimensions; i++) squares += (vector[i] as number) * (vector[i] as number);
  const norm = Math.sqrt(squares);
  if (!Number.isFinite(norm) || norm === 0) {
    throw new RangeError(`${what} must have finite components and must not be all zeros`);
  }
  const unit = new Float32Array(dimensions);
  for (let i = 0; i < dimensions; i++) unit[i] = (vector[i] as number) / norm;
  return unit;
}
