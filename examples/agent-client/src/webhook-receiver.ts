import { createServer, type Server } from 'node:http';
import { AgentInfraError, verifyWebhook } from '@agentinfra/client';

/**
 * An HTTP server for signed deliveries (postbox webhooks, scheduler
 * callbacks): reads the exact body, checks its Standard Webhooks signature
 * against `secrets` (pass the new and the previous secret during a rotation),
 * answers 200 and hands the parsed payload to `onEvent`, or answers 401
 * without calling it. Call `listen` on the result.
 */
export function createWebhookReceiver(secrets: readonly string[], onEvent: (payload: unknown) => void): Server {
  return createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', async () => {
      try {
        onEvent(await verifyWebhook({ secret: secrets, headers: request.headers, body: Buffer.concat(chunks) }));
        response.writeHead(200).end();
      } catch (error) {
        if (!(error instanceof AgentInfraError)) throw error;
        response.writeHead(401).end(error.message);
      }
    });
  });
}
