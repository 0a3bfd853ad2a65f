import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Ajv from 'ajv';
import { providerWebhookUrls } from '../provider';
import { connectNcco, nccoAnswer, talkNcco } from './vonage-ncco';

// Vonage's own NCCO schema (draft-04), copied unchanged into fixtures/ with its MIT licence.
const readJson = (...path: string[]): object => JSON.parse(readFileSync(join(process.cwd(), ...path), 'utf8')) as object;
const schema = readJson('libs/cpaas/src/vonage/fixtures/ncco-schema.json');
const draft04 = readJson('node_modules/ajv/lib/refs/json-schema-draft-04.json');
const ajv = new Ajv({ schemaId: 'auto', allErrors: true });
ajv.addMetaSchema(draft04);
const validate = ajv.compile(schema);

function expectValid(ncco: unknown): void {
  const valid = validate(ncco);
  expect(valid ? [] : validate.errors).toEqual([]);
}

describe('NCCO for the voice bridge', () => {
  const eventUrl = providerWebhookUrls('https://broker.example.com/', 'failover').statusCallback;

  it('connects the other participant from the proxy number, events back to the broker', () => {
    const ncco = connectNcco({ to: '+447700900001', callerId: '+447700900000', eventUrl });
    expectValid(ncco);
    expect(ncco).toEqual([
      {
        action: 'connect',
        from: '447700900000',
        timeout: 45,
        eventUrl: ['https://broker.example.com/v1/providers/failover/status'],
        eventMethod: 'POST',
        endpoint: [{ type: 'phone', number: '447700900001' }],
      },
    ]);
  });

  it('the instruction is the JSON NCCO, validated as Vonage would parse it', () => {
    const instruction = nccoAnswer(connectNcco({ to: '+14155550100', callerId: '+14155550199', eventUrl }));
    expect(instruction).toMatchObject({ status: 200, contentType: 'application/json' });
    expectValid(JSON.parse(instruction.body));
  });

  it('talk: valid, and cut at the schema limit of 1,500 characters', () => {
    expectValid(talkNcco('This number is not in a session.'));
    const long = talkNcco('x'.repeat(2000));
    expectValid(long);
    expect(long[0]).toMatchObject({ text: 'x'.repeat(1500) });
  });

  it('the schema does refuse what is not Vonage NCCO (the check can fail)', () => {
    expect(validate([{ action: 'connect', from: '+447700900000', endpoint: [{ type: 'phone', number: '447700900001' }] }])).toBe(false);
    expect(validate([{ action: 'connect', endpoint: [{ type: 'phone', number: '447700900001' }], eventUrl: ['ftp://x'] }])).toBe(false);
    expect(validate([{ action: 'dial', to: '447700900001' }])).toBe(false);
  });
});
