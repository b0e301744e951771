/** A growable buffer of 32-bit integers, reused across calls (set `length = 0` to empty it). */
export class IntBuffer {
  /** The storage; entries at `length` and beyond are stale. */
  values = new Int32Array(1_024);
  /** Entries in use. */
  length = 0;

  /** Appends `value`, doubling the storage when it is full. */
  push(value: number): void {
    if (this.length === this.values.length) {
      const grown = new Int32Array(this.values.length * 2);
      grown.set(this.values);
      this.values = grown;
    }
    this.values[this.length++] = value;
  }
}
