/**
 * `npm run receive-webhooks -- --secret whsec_… [--port 4000]`: a local receiver for the quick start.
 * It prints one line per verified event and a warning per refused request.
 */
import { parseArgs } from 'node:util';
import { describeEvent, webhookReceiver } from './webhook-receiver';

const { values } = parseArgs({ options: { secret: { type: 'string', multiple: true }, port: { type: 'string', default: '4000' } } });
if (!values.secret?.length) {
  console.error('receive-webhooks: --secret is required (the webhookSecret the broker showed you)');
  process.exit(2);
}
const port = Number(values.port);
const server = webhookReceiver(
  values.secret,
  (event) => console.log(`verified ${describeEvent(event)}`),
  (reason) => console.warn(`refused a request: ${reason}`),
);
server.listen(port, '127.0.0.1', () => console.log(`receiving webhooks on http://127.0.0.1:${port}/ (any path)`));
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => server.close(() => process.exit(0)));
