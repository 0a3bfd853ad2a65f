/**
 * `WEBHOOK_SECRET=whsec_… npm run receive-webhooks [-- --port 4000]`, or `-- --secret-file <file>`: a local
 * receiver for the quick start. It prints one line per verified event and a warning per refused request.
 * The secret comes from the environment or a file, never the command line, where `ps` would show it to
 * anyone on the machine. Several secrets (during a rotation): separated by commas, spaces or newlines.
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { describeEvent, webhookReceiver } from './webhook-receiver';

function fail(message: string): never {
  console.error(`receive-webhooks: ${message}`);
  process.exit(2);
}

const { values } = parseArgs({
  options: { 'secret-file': { type: 'string' }, secret: { type: 'string', multiple: true }, port: { type: 'string', default: '4000' } },
});
if (values.secret) fail('--secret would show the secret to anyone running ps: set WEBHOOK_SECRET or pass --secret-file <file>');
let given: string;
try {
  // eslint-disable-next-line no-restricted-syntax -- an example program: its one setting comes from its own environment
  given = values['secret-file'] ? readFileSync(values['secret-file'], 'utf8') : (process.env.WEBHOOK_SECRET ?? '');
} catch (error) {
  fail(`cannot read --secret-file: ${(error as Error).message}`);
}
const secrets = given.split(/[\s,]+/).filter(Boolean);
if (secrets.length === 0) fail('no secret: set WEBHOOK_SECRET (the webhookSecret the broker showed you) or pass --secret-file <file>');

const port = Number(values.port);
const server = webhookReceiver(
  secrets,
  (event) => console.log(`verified ${describeEvent(event)}`),
  (reason) => console.warn(`refused a request: ${reason}`),
);
server.listen(port, '127.0.0.1', () => console.log(`receiving webhooks on http://127.0.0.1:${port}/ (any path)`));
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => server.close(() => process.exit(0)));
