/** A growable buffer of numbers in a typed array, reused across calls (set `length = 0` to empty it). */
class TypedBuffer<A extends Int32Array | Float64Array> {
  /** Entries in use. */
  length = 0;

  /**
   * @param values the first storage; entries at `length` and beyond are stale.
   * @param allocate makes a larger storage of the same kind.
   */
  constructor(
    public values: A,
    private readonly allocate: (size: number) => A,
  ) {}

  /** Appends `value`, doubling the storage when it is full. */
  push(value: number): void {
    if (this.length === this.values.length) {
      const grown = this.allocate(this.values.length * 2);
      grown.set(this.values);
      this.values = grown;
    }
    this.values[this.length++] = value;
  }
}

/** A growable buffer of 32-bit integers. */
export class IntBuffer extends TypedBuffer<Int32Array> {
  constructor() {
    super(new Int32Array(1_024), (size) => new Int32Array(size));
  }
}

/** A growable buffer of doubles. */
export class FloatBuffer extends TypedBuffer<Float64Array> {
  constructor() {
    super(new Float64Array(1_024), (size) => new Float64Array(size));
  }
}
