/**
 * The adapter against what Africa's Talking's own npm package (`africastalking`, pinned) makes: the
 * Voice XML it answers calls with, parsed and compared with what the package's ActionBuilder builds
 * (and validates with its Joi schemas) for the same instruction; and the SMS and account requests,
 * both captured on a local server (the package's axios is pointed there), compared field by field.
 */
import { createRequire } from 'node:module';
import { resolve } from 'node:path';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { XMLParser } from 'fast-xml-parser';
import { AfricasTalkingProviderAdapter } from './africastalking-provider.adapter';

// Loaded outside Jest's module registry, so the axios it uses is the one whose requests we redirect.
const nativeRequire = createRequire(resolve('package.json'));
const packageRequire = createRequire(nativeRequire.resolve('africastalking'));
type AfricasTalkingPackage = (options: { username: string; apiKey: string }) => {
  SMS: { send(params: { to: string; from: string; message: string }): Promise<unknown> };
  APPLICATION: { fetchApplicationData(): Promise<unknown> };
  VOICE: { ActionBuilder: new () => ActionBuilder };
};
interface ActionBuilder {
  dial(phoneNumbers: string, attributes?: Record<string, unknown>): ActionBuilder;
  say(text: string): ActionBuilder;
  reject(): ActionBuilder;
  build(): string;
}
const africastalking = packageRequire('africastalking') as AfricasTalkingPackage;
interface AxiosLike {
  interceptors: { request: { use(f: (c: { url?: string; baseURL?: string }) => unknown): number; eject(id: number): void } };
  create(config: unknown): AxiosLike;
}
const packageAxios = packageRequire('axios') as AxiosLike;

const USERNAME = 'lagos-rides';
const API_KEY = 'atsk_' + 'ab12'.repeat(16);
const TOKEN = 'f'.repeat(40);
const xml = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '@', parseAttributeValue: false });

interface Captured {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

let server: Server;
let base: string;
const captured: Captured[] = [];
let interceptor: number;
const create = packageAxios.create.bind(packageAxios);

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      captured.push({ method: req.method!, path: req.url!, headers: req.headers, body: Buffer.concat(chunks).toString() });
      const sms = req.url!.startsWith('/version1/messaging');
      res.writeHead(sms ? 201 : 200, { 'content-type': 'application/json' }).end(
        JSON.stringify(
          sms
            ? {
                SMSMessageData: {
                  Message: 'Sent to 1/1',
                  Recipients: [{ statusCode: 101, number: '+2348031234567', status: 'Success', cost: 'NGN 2.2000', messageId: 'ATXid_1' }],
                },
              }
            : { UserData: { balance: 'NGN 1500.00' } },
        ),
      );
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  // The SMS module calls axios itself; the account module makes instances with a baseURL.
  const toLocal = (config: { url?: string; baseURL?: string }) => ({
    ...config,
    url: config.url?.replace(/^https:\/\/[^/]+/, base),
    ...(config.baseURL ? { baseURL: config.baseURL.replace(/^https:\/\/[^/]+/, base) } : {}),
  });
  interceptor = packageAxios.interceptors.request.use(toLocal);
  packageAxios.create = (config: unknown) => {
    const instance = create(config);
    instance.interceptors.request.use(toLocal);
    return instance;
  };
});

afterAll(async () => {
  packageAxios.interceptors.request.eject(interceptor);
  packageAxios.create = create;
  await new Promise((done) => server.close(done));
});

function adapter(): AfricasTalkingProviderAdapter {
  return new AfricasTalkingProviderAdapter({
    name: 'primary',
    username: USERNAME,
    apiKey: API_KEY,
    webhookToken: TOKEN,
    publicUrl: 'https://broker.example.com',
    baseUrl: base,
    timeoutMs: 2_000,
  });
}

const form = (body: string) => Object.fromEntries(new URLSearchParams(body));

describe("Voice XML: what the africastalking package's ActionBuilder builds", () => {
  const builder = () => africastalking({ username: USERNAME, apiKey: API_KEY }).VOICE.ActionBuilder;

  it('the bridge is a Dial of the other participant showing the proxy number', () => {
    const ours = adapter().voiceBridgeInstruction({ to: '+2348031234567', callerId: '+2349010000001' });
    const Builder = builder();
    const theirs = new Builder().dial('+2348031234567', { callerId: '+2349010000001' }).build();
    expect(xml.parse(ours.body)).toEqual(xml.parse(theirs));
    expect(xml.parse(ours.body).Response.Dial).toEqual({ '@phoneNumbers': '+2348031234567', '@callerId': '+2349010000001' });
  });

  it('the out-of-session answer is a Say', () => {
    const Builder = builder();
    expect(xml.parse(adapter().voiceSayInstruction({ text: 'No session on this number.' }).body)).toEqual(
      xml.parse(new Builder().say('No session on this number.').build()),
    );
  });

  it('the package refuses a Dial without numbers, so the shape we compare against is the validated one', () => {
    const Builder = builder();
    expect(() => new Builder().dial(undefined as unknown as string, { callerId: '+2349010000001' })).toThrow(/phoneNumbers/);
  });
});

describe('Requests: what the africastalking package sends', () => {
  beforeEach(() => void captured.splice(0));

  it('an SMS: the same method, path, form fields and apikey header', async () => {
    const sms = { to: '+2348031234567', from: '+2349010000001', text: 'Your driver is outside' };
    const ours = await adapter().sendSms(sms);
    expect(ours).toMatchObject({ ok: true, value: { messageId: 'ATXid_1' } });
    await africastalking({ username: USERNAME, apiKey: API_KEY }).SMS.send({ to: sms.to, from: sms.from, message: sms.text });
    const [a, b] = captured;
    expect([a.method, a.path]).toEqual([b.method, b.path]);
    expect(form(a.body)).toEqual(form(b.body));
    expect(a.headers.apikey).toBe(b.headers.apikey);
    expect(a.headers['content-type']).toMatch(/^application\/x-www-form-urlencoded/);
    expect(b.headers['content-type']).toMatch(/^application\/x-www-form-urlencoded/);
    expect(a.headers.accept).toBe(b.headers.accept);
  });

  it('the health check is the account read the package makes', async () => {
    expect((await adapter().healthCheck()).ok).toBe(true);
    await africastalking({ username: USERNAME, apiKey: API_KEY }).APPLICATION.fetchApplicationData();
    const [a, b] = captured;
    expect([a.method, new URL(a.path, base).pathname, form(new URL(a.path, base).search)]).toEqual([
      b.method,
      new URL(b.path, base).pathname,
      form(new URL(b.path, base).search),
    ]);
    expect(a.headers.apikey).toBe(API_KEY);
    expect(b.headers.apikey).toBe(API_KEY);
  });
});
