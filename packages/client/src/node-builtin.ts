import { AgentInfraError } from './errors.js';

/**
 * Loads a Node built-in when an upload runs, through a specifier that is
 * not a literal, so a bundler for browsers neither resolves nor includes it.
 * @returns the module namespace of `node:<name>`.
 * @throws AgentInfraError (status 0, `invalid_request`) outside Node, before any request is made.
 */
export async function nodeBuiltin<T>(name: 'crypto' | 'fs'): Promise<T> {
  if (typeof process === 'undefined' || !process.versions?.node)
    throw new AgentInfraError({
      status: 0,
      code: 'invalid_request',
      message: `artifacts.upload needs Node 20+ (node:${name}); in a browser, call artifacts.register, PUT the bytes to upload_url, then artifacts.commit.`,
    });
  const specifier = `node:${name}`;
  return (await import(specifier)) as T;
}
