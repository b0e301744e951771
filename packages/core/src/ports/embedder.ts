/**
 * Turns text into dense vectors for semantic memory.
 *
 * Implementations return one L2-normalised `Float32Array` of length
 * {@link Embedder.dimensions} per input text, in input order, so that the dot
 * product of two vectors is their cosine similarity.
 */
export interface Embedder {
  /**
   * Stable identifier of the model and its parameters (for example
   * `wordvec-sg100-v1` or `openai:text-embedding-3-small@1536`). Stored with
   * the vector index; a store embedded with another id is refused at start.
   */
  readonly id: string;
  /** Length of every vector this embedder returns. */
  readonly dimensions: number;
  /**
   * Embeds a batch of texts.
   * @returns one unit-length vector per text (an empty text gives the zero vector).
   * @throws Error wrapping the cause when a remote model server fails.
   */
  embed(options: { texts: readonly string[] }): Promise<Float32Array[]>;
  /**
   * Word-alignment similarity of `query` to each of `texts`, to re-rank a
   * few search candidates more finely than the cosine of their two vectors:
   * each word of one text is matched with its most similar word of the
   * other. Optional: a model that compares words (static word vectors)
   * implements it; a remote sentence model need not, and search then ranks
   * by cosine alone.
   * @returns one score per text, in order, in [-1, 1] (higher is more similar), comparable within one call.
   * @throws Error wrapping the cause when the model cannot be loaded.
   */
  alignmentScores?(options: { query: string; texts: readonly string[] }): Promise<number[]>;
  /** Releases resources (model files, sockets). Optional. */
  close?(): Promise<void>;
}
