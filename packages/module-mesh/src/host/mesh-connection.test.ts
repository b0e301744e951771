import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { meshCall } from './mesh-connection.js';

// Docs walkthrough: `wg-config` printed only "The request body does not match the schema." without the field.
describe('meshCall errors', () => {
  let server: Server;
  let base: string;

  beforeAll(async () => {
    server = createServer((_request, response) => {
      const error = {
        code: 'invalid_request',
        message: 'The request body does not match the schema.',
        details: { fields: [{ path: 'endpoint', message: 'must be <host>:<port>' }] },
      };
      response.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ error }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/functions/v1`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('names the fields a 400 lists', async () => {
    await expect(meshCall({ base, key: 'dk_x' }, '/peer/register', {})).rejects.toThrow(
      '/peer/register: HTTP 400 invalid_request: The request body does not match the schema. (endpoint: must be <host>:<port>)',
    );
  });
});
