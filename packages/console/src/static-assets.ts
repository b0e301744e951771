import { readFileSync } from 'node:fs';

const types: Record<string, string> = { 'console.js': 'text/javascript; charset=utf-8', 'console.css': 'text/css; charset=utf-8' };
const assets = new Map<string, string>();
for (const name of Object.keys(types)) assets.set(name, readFileSync(new URL(`../public/${name}`, import.meta.url), 'utf8'));

/** A file of the package's `public/` folder (read once at start-up), or `null` for any other name. */
export function staticAsset(name: string): Response | null {
  const body = assets.get(name);
  const type = types[name];
  if (body === undefined || type === undefined) return null;
  return new Response(body, { headers: { 'content-type': type, 'cache-control': 'public, max-age=300' } });
}
