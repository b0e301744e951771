import { runNodeModule } from '@agentinfra/core/testing';
import { expect, it } from 'vitest';

/** Packages only a running server's SMTP listener, MIME parsing and relay need (with their loading CPU). */
const LAZY = ['mailparser', 'libmime', 'nodemailer', 'nodemailer/lib/mail-composer', 'smtp-server'];

/** Module hooks (`module.register`) that refuse to resolve {@link LAZY}: an import of one fails with `loaded at import: <name>`. */
const refusingHooks = `export async function resolve(specifier, context, next) {
  if (${JSON.stringify(LAZY)}.includes(specifier)) throw new Error('loaded at import: ' + specifier);
  return next(specifier, context);
}`;

it('imports the package entry without mailparser, libmime, nodemailer or smtp-server', async () => {
  // Every CLI command imports every module for its migrations and config: these would cost it ~0.5 s of CPU.
  const entry = new URL('./index.ts', import.meta.url).href;
  const script = [
    "const { register } = await import('node:module');",
    `register(${JSON.stringify(`data:text/javascript,${encodeURIComponent(refusingHooks)}`)});`,
    `const postbox = await import(${JSON.stringify(entry)});`,
    'console.log(typeof postbox.postboxModule.migrations);',
    // The hooks do refuse what they should: a direct import of one fails.
    "console.log(await import('smtp-server').then(() => 'smtp-server loaded', (error) => error.message));",
  ].join('\n');
  const output = await runNodeModule(script, ['--conditions=@agentinfra/source', '--import', 'tsx']);
  expect(output.split('\n')).toEqual(['object', 'loaded at import: smtp-server']);
}, 60_000);

it('parses, composes and relays (json) with the packages loaded on first use', async () => {
  const { composeMessage, createMailRelay, parseMimeMessage } = await import('./index.js');
  const raw = await composeMessage({
    from: 'a@sender.test',
    to: 'b@postbox.test',
    subject: 'hello',
    text: 'body text',
    messageId: '<m1@sender.test>',
    date: new Date(0),
  });
  const parsed = await parseMimeMessage(raw, { maxBodyBytes: 1_048_576 });
  expect(parsed).toMatchObject({ from: 'a@sender.test', subject: 'hello', text: 'body text\n' });
  const relay = createMailRelay({ relayUrl: 'json', rejectUnauthorized: true });
  await relay.send({ from: 'a@sender.test', to: ['b@postbox.test'], raw, signal: new AbortController().signal });
  relay.close();
});
