import { createCapturedLogger } from '@agentinfra/core/testing';
import { sqlDatabases } from '@agentinfra/testkit';
import nodemailer from 'nodemailer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAIL_DOMAIN } from './test-support/postbox-test-server.js';
import { usePostboxServer } from './test-support/use-postbox-server.js';

const POSTMASTER = `postmaster@${MAIL_DOMAIN}`;
const report = (subject: string) =>
  ['From: abuse-desk@isp.example', `To: ${POSTMASTER}`, `Subject: ${subject}`, '', 'Your server sent us a bounce loop.', ''].join('\r\n');

describe.each(sqlDatabases())('postbox.postmasterAgent naming no agent on $name', ({ create }) => {
  let transport: ReturnType<typeof nodemailer.createTransport>;
  const captured = createCapturedLogger('info');
  const t = usePostboxServer(create, { logger: captured.logger, postboxConfig: { postmasterAgent: 'carol' } });

  beforeAll(() => {
    transport = nodemailer.createTransport({ host: '127.0.0.1', port: t.smtpPort, secure: false, ignoreTLS: true });
  });
  afterAll(() => {
    transport?.close();
  });

  const sendToPostmaster = (subject: string) =>
    transport
      .sendMail({ envelope: { from: 'abuse-desk@isp.example', to: [POSTMASTER] }, raw: report(subject) })
      .catch((error: { response: string }) => error);
  const carolsMail = async () => {
    const listed = await t.postbox('admin/messages/list', { agent_id: 'carol', limit: 50, cursor: null }, t.bridge);
    expect(listed.status).toBe(200);
    return (listed.body.messages as Array<{ subject: string; to: string }>).map(({ subject, to }) => ({ subject, to }));
  };

  it('warns at start, and refuses postmaster mail (SMTP 550, /ingest 404) while the agent does not exist', async () => {
    expect((await sendToPostmaster('Loop 1')).response).toBe(`550 5.1.1 <${POSTMASTER}>: no such mailbox here`);
    const ingested = await t.postbox(
      'ingest',
      { to: POSTMASTER, from: 'abuse-desk@isp.example', subject: 'Loop 2', body: 'again', headers: {} },
      t.bridge,
    );
    expect(ingested.status).toBe(404);
    expect(ingested.body.error.code).toBe('not_found');
    expect(await carolsMail()).toEqual([]);

    const warnings = captured.lines.filter((line) => String(line.msg).startsWith('postbox.postmasterAgent'));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({ level: 40, postmaster_agent: 'carol' });
  });

  it('delivers postmaster mail once the agent is created, without a restart', async () => {
    const created = await t.server.call('agent-identity/agents/create', { agent_id: 'carol', display_name: 'Carol' }, t.bridge);
    expect(created.status).toBe(200);
    expect((await sendToPostmaster('Loop 3')).response).toMatch(/^250 2\.0\.0 OK: queued as msg_/);
    expect(await carolsMail()).toEqual([{ subject: 'Loop 3', to: POSTMASTER }]);
  });
});
