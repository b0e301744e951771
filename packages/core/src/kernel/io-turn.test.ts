import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { createConnection, createServer, type Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { nextIoTurn } from './io-turn.js';

describe('nextIoTurn', () => {
  it('resolves only after the loop read the I/O that arrived meanwhile', async () => {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const client = createConnection((server.address() as AddressInfo).port, '127.0.0.1');
    const [accepted] = (await once(server, 'connection')) as [Socket];
    const received: string[] = [];
    accepted.on('data', (chunk: Buffer) => received.push(chunk.toString()));
    try {
      client.write('first');
      // Resumes inside the callback that read "first": in the loop's I/O (poll) phase.
      await once(accepted, 'data');
      client.write('second');
      await nextIoTurn();
      expect(received).toEqual(['first', 'second']);
    } finally {
      client.destroy();
      accepted.destroy();
      server.close();
    }
  });
});
