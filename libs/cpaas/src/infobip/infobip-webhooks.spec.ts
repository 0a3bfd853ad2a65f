/**
 * Infobip's webhooks as its SDK models shape them (the contract fixtures): the Calls API's
 * CALL_RECEIVED (a call to bridge) and dialog events (routed as statuses), delivery reports and
 * inbound SMS; the token in the URL; strict reading.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { isInvalidWebhookError } from '../errors';
import type { WebhookRequest, WebhookRoute } from '../provider';
import { InfobipProviderAdapter } from './infobip-provider.adapter';

const TOKEN = '0123456789abcdef'.repeat(3);
const fixture = (file: string): Record<string, unknown> =>
  JSON.parse(readFileSync(resolve('libs/cpaas/src/infobip/fixtures', file), 'utf8')) as Record<string, unknown>;
const adapter = new InfobipProviderAdapter({
  name: 'failover',
  apiKey: 'k'.repeat(32),
  webhookToken: TOKEN,
  publicUrl: 'https://broker.example.com',
  timeoutMs: 1_000,
  clock: { now: () => Date.parse('2026-07-15T12:05:00Z') },
});
afterAll(() => adapter.close());

function webhook(route: WebhookRoute, body: unknown, query = `?token=${TOKEN}`): WebhookRequest {
  return {
    url: `https://broker.example.com/v1/providers/failover/${route}${query}`,
    method: 'POST',
    route,
    headers: { 'content-type': 'application/json' },
    rawBody: Buffer.from(JSON.stringify(body)),
  };
}

function fieldOf(read: () => unknown): string | undefined {
  try {
    read();
  } catch (error) {
    if (isInvalidWebhookError(error)) return error.field;
    throw error;
  }
  throw new Error('expected an invalid webhook');
}

describe('Infobip webhooks', () => {
  it('token: right valid, none missing, wrong invalid', () => {
    expect(adapter.verifyWebhook(webhook('status', {}))).toBe('valid');
    expect(adapter.verifyWebhook(webhook('status', {}, ''))).toBe('missing');
    expect(adapter.verifyWebhook(webhook('status', {}, '?token=nope'))).toBe('invalid');
  });

  it('CALL_RECEIVED is a call to bridge; the digits come out E.164', () => {
    const req = webhook('inbound/voice', fixture('call-received.json'));
    expect(adapter.webhookRoute(req)).toBe('inbound/voice');
    expect(adapter.parseInbound('voice', req)).toEqual({
      channel: 'voice',
      eventId: 'call-inbound-1',
      callId: 'call-inbound-1',
      from: '+2348031234567',
      to: '+2349020000001',
      at: '2026-07-15T12:00:00.000Z',
    });
  });

  it('dialog events on the voice URL are statuses that settle the inbound call', () => {
    const finished = webhook('inbound/voice', fixture('dialog-finished.json'));
    expect(adapter.webhookRoute(finished)).toBe('status');
    expect(adapter.parseStatus(finished)).toEqual({
      type: 'call.completed',
      eventId: 'call-inbound-1:dialog',
      callId: 'call-inbound-1',
      bridgedCallId: 'call-child-1',
      from: '+2348031234567',
      to: '+2348039876543',
      answer: 'completed',
      durationSec: 90,
      at: '2026-07-15T12:01:40.000Z',
    });
    expect(adapter.parseStatus(webhook('inbound/voice', fixture('dialog-failed.json')))).toMatchObject({
      type: 'call.completed',
      answer: 'busy',
    });
    const established = { type: 'DIALOG_ESTABLISHED', dialogId: 'dialog-3a8b2c1d', properties: {} };
    expect(adapter.parseStatus(webhook('inbound/voice', established))).toMatchObject({ type: 'call.progress' });
  });

  it('a delivery report and an inbound SMS are read from their results', () => {
    expect(adapter.parseStatus(webhook('status', fixture('delivery-report.json')))).toMatchObject({
      type: 'message.delivered',
      messageId: '2250be2d4219-3af1-78856-aabe-1362af1edfd2',
      to: '+2348031234567',
      from: '+2349020000001',
    });
    const undeliverable = fixture('delivery-report.json') as { results: Array<Record<string, unknown>> };
    undeliverable.results[0] = {
      ...undeliverable.results[0],
      status: { groupId: 2, groupName: 'UNDELIVERABLE', id: 9, name: 'UNDELIVERABLE_NOT_DELIVERED' },
      error: { groupId: 1, groupName: 'HANDSET_ERRORS', id: 27, name: 'EC_ABSENT_SUBSCRIBER', permanent: false },
    };
    expect(adapter.parseStatus(webhook('status', undeliverable))).toMatchObject({
      type: 'message.undelivered',
      errorCode: 'HANDSET_ERRORS:EC_ABSENT_SUBSCRIBER',
    });
    expect(adapter.parseInbound('sms', webhook('inbound/sms', fixture('inbound-sms.json')))).toMatchObject({
      channel: 'sms',
      messageId: '817790313235066447',
      from: '+2348031234567',
      to: '+2349020000001',
      text: 'I am at the gate',
    });
  });

  it('bodies that are not Infobip’s, or batched, name the field', () => {
    const received = fixture('call-received.json') as { properties: { call: Record<string, unknown> } };
    received.properties.call.from = 'anonymous';
    expect(fieldOf(() => adapter.parseInbound('voice', webhook('inbound/voice', received)))).toBe('properties.call.from');
    const batched = fixture('inbound-sms.json') as { results: unknown[] };
    batched.results.push(batched.results[0]);
    expect(fieldOf(() => adapter.parseInbound('sms', webhook('inbound/sms', batched)))).toBe('results');
    expect(fieldOf(() => adapter.parseStatus(webhook('status', { results: [{ messageId: 'm', to: '234', status: {} }] })))).toBe(
      'results[0].status.groupName',
    );
  });
});
