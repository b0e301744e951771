import { createAesGcmSecretBox, newMasterKey, newWebhookSecret } from '@agentinfra/core';
import { reopenableDatabases } from '@agentinfra/testkit';
import { describe, expect, it } from 'vitest';
import { postboxModule } from './module.js';
import { type PostboxTestServer, startPostboxTestServer } from './test-support/postbox-test-server.js';

interface SealedRow {
  id: string;
  secret_sealed: string;
  previous_sealed: string | null;
}

describe.each(reopenableDatabases())('agent-postbox master key rotation on $name', ({ create }) => {
  it('reseals current and previous webhook secrets, so they open once only the new key is configured', async () => {
    const store = await create();
    const inspect = store.open();
    const running: PostboxTestServer[] = [];
    const start = async (options: { masterKey: string; previousMasterKeys?: string[]; seed: boolean }) => {
      const server = await startPostboxTestServer({ db: store.open(), jobsEnabled: false, ...options });
      running.push(server);
      return server;
    };
    const stop = async (server: PostboxTestServer) => {
      running.splice(running.indexOf(server), 1);
      await server.stop();
    };
    const rows = async () => (await inspect.knex('postbox_webhooks').select('id', 'secret_sealed', 'previous_sealed')) as SealedRow[];
    const [oldKey, newKey] = [newMasterKey(), newMasterKey()];
    try {
      const first = await start({ masterKey: oldKey, seed: true });
      const [original, rotated] = [newWebhookSecret(), newWebhookSecret()];
      const registered = await first.postbox(
        'webhook/register',
        { agent_id: 'alice', url: 'http://127.0.0.1:9/hook', secret: original },
        'alice',
      );
      expect(registered.status).toBe(200);
      const webhookId = registered.body.webhook_id as string;
      expect((await first.postbox('webhook/rotate', { agent_id: 'alice', webhook_id: webhookId, secret: rotated }, 'alice')).status).toBe(
        200,
      );
      await stop(first);

      const second = await start({ masterKey: newKey, previousMasterKeys: [oldKey], seed: false });
      const job = postboxModule.jobs?.find((candidate) => candidate.name === 'postbox.reseal-secrets');
      expect(job?.schedule).toEqual({ every: 3_600_000 });
      await job?.run({ payload: null, attempt: 1, scheduledFor: null, signal: new AbortController().signal, service: second.service });
      expect(await second.service.webhooks.resealSecrets()).toBe(0);
      await stop(second);

      const onlyNewKey = createAesGcmSecretBox({ masterKey: newKey });
      const [row] = await rows();
      const context = `postbox-webhook:${webhookId}`;
      expect(row?.id).toBe(webhookId);
      expect(onlyNewKey.open({ sealed: row?.secret_sealed ?? '', context })).toBe(rotated);
      expect(onlyNewKey.open({ sealed: row?.previous_sealed ?? '', context })).toBe(original);
    } finally {
      for (const server of running) await server.stop();
      await inspect.close();
      await store.cleanup();
    }
  }, 30_000);
});
