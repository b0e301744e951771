import { randomBytes } from 'node:crypto';

/** The two agents of a pair in canonical order (`a` < `b` by code units), the key of its PSK row. */
export function orderedPair(x: string, y: string): { a: string; b: string } {
  return x < y ? { a: x, b: y } : { a: y, b: x };
}

/** A new WireGuard pre-shared key: 32 random bytes, base64 (as `wg genpsk` prints it). */
export function newPresharedKey(): string {
  return randomBytes(32).toString('base64');
}

/**
 * Additional authenticated data a pair's PSK is sealed with, so a sealed
 * key copied onto another pair's row does not open.
 */
export function presharedKeyContext(pair: { a: string; b: string }): string {
  return `mesh.psk\0${pair.a}\0${pair.b}`;
}
