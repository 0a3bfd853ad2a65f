import { createServer, type Server } from 'node:http';
import { constructEvent, WebhookVerificationError, type WebhookEvent } from '@session-broker/sdk';

/**
 * A receiver for the broker's webhooks: verifies each request over its raw bytes, answers 204 at once and
 * hands the typed event on; a request that fails verification gets a 400 naming why. `secrets`: your
 * current secret, plus the previous one for the 24 h after a rotation.
 */
export function webhookReceiver(
  secrets: string[],
  onEvent: (event: WebhookEvent) => void,
  onRefused: (reason: string) => void = () => undefined,
): Server {
  return createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      let event: WebhookEvent;
      try {
        event = constructEvent(Buffer.concat(chunks), req.headers, secrets);
      } catch (error) {
        if (!(error instanceof WebhookVerificationError)) throw error;
        res.writeHead(400, { 'content-type': 'text/plain' }).end(error.reason);
        onRefused(error.reason);
        return;
      }
      res.writeHead(204).end(); // acknowledge fast, work later
      onEvent(event);
    });
  });
}

/** What a handler does with each type: `data` is typed by `event.type`. */
export function describeEvent(event: WebhookEvent): string {
  switch (event.type) {
    case 'session.created':
    case 'session.closed':
    case 'session.expired':
      return `${event.type}: session ${event.data.session.id}, proxy number ${event.data.session.proxyNumber}`;
    case 'message.relayed':
      return `message.relayed: ${event.data.from} -> ${event.data.to} (interaction ${event.data.interactionId}, attempts ${event.data.attempts})`;
    case 'message.failed':
      return `message.failed: ${event.data.from} -> ${event.data.to}: ${event.data.reason}`;
    case 'call.completed':
      return `call.completed: ${event.data.from} -> ${event.data.to}: ${event.data.answer}, ${event.data.durationSec} s`;
    case 'interaction.blocked':
      return `interaction.blocked: ${event.data.channel} ${event.data.from} -> ${event.data.to}: ${event.data.reason}`;
    case 'interaction.out_of_session':
      return `interaction.out_of_session: ${event.data.channel} from ${event.data.from} to ${event.data.proxyNumber} (${event.data.reason})`;
    case 'session.rebound':
      return `session.rebound: session ${event.data.session.id} moved off ${event.data.from.provider} ${event.data.from.proxyNumber} to ${event.data.to.provider} ${event.data.to.proxyNumber}`;
    case 'session.rescue_failed':
      return `session.rescue_failed: session ${event.data.session.id} stays on ${event.data.from.provider}: ${event.data.reason}`;
    case 'provider.state_changed':
      return `provider.state_changed: ${event.data.provider} ${event.data.from} -> ${event.data.to}`;
  }
}
