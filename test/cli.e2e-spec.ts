/**
 * The operator CLI against the running broker: accounts and keys (a revoked key stops working),
 * providers (disable shows in the state table and in routing), proxy numbers, and problems from the
 * broker as one line with exit code 1. Most commands run in-process; the last test runs
 * `npm run broker -- …` as an operator types it, settings from the environment.
 */
import { jest } from '@jest/globals';
import { spawn } from 'node:child_process';
import { runCli } from '../apps/cli/src/cli';
import { startBroker, type BrokerHarness } from './support/broker-harness';
import { startFaultProxy, type FaultProxy } from './support/fault-proxy';

// Generous bounds for a loaded 2-core CI machine; nothing here asserts a duration.
jest.setTimeout(60_000);

const API_KEY = 'cli-e2e-api-key-0001';
const ADMIN_TOKEN = 'cli-e2e-admin-token-0001';

interface CliResult {
  code: number;
  out: string;
  err: string;
}

describe('operator CLI against the running broker', () => {
  let broker: BrokerHarness;

  async function cli(...argv: string[]): Promise<CliResult> {
    const out: string[] = [];
    const err: string[] = [];
    const code = await runCli(
      argv,
      { url: broker.url, adminToken: ADMIN_TOKEN },
      { stdout: (t) => out.push(t), stderr: (t) => err.push(t) },
    );
    return { code, out: out.join('\n'), err: err.join('\n') };
  }

  async function json<T>(...argv: string[]): Promise<T> {
    const result = await cli(...argv, '--json');
    expect(result).toMatchObject({ code: 0, err: '' });
    return JSON.parse(result.out) as T;
  }

  async function sessionStatus(apiKey: string): Promise<number> {
    const res = await fetch(`${broker.url}/v1/sessions?limit=1`, { headers: { authorization: `Bearer ${apiKey}` } });
    return res.status;
  }

  beforeAll(async () => {
    broker = await startBroker({ BROKER_API_KEY: API_KEY, ADMIN_TOKEN });
  });
  afterAll(() => broker?.close());

  it('creates an account whose key works, adds a second key, lists them, and revokes one', async () => {
    const created = await cli('accounts', 'create', 'acme rides', '--label', 'backend');
    expect(created.code).toBe(0);
    const key = /api key {2}(\S+)/.exec(created.out)?.[1];
    const accountId = /account {2}(\S+)/.exec(created.out)?.[1];
    expect(key).toBeDefined();
    expect(created.out).toContain('acme rides');
    expect(await sessionStatus(key!)).toBe(200);
    // The account's first webhook secret, shown this once: the reveal (its admin twin) refuses it after.
    expect(created.out).toMatch(/webhook secret {2}whsec_\S+/);
    const reveal = await cli('accounts', 'reveal-secret', accountId!);
    expect(reveal.code).toBe(1);
    expect(reveal.err).toMatch(/already shown/);

    const second = await json<{ id: string; key: string; accountId: string }>('keys', 'create', accountId!, '--label', 'ci');
    expect(second.accountId).toBe(accountId);
    expect(await sessionStatus(second.key)).toBe(200);

    const listed = await cli('accounts', 'list');
    expect(listed.code).toBe(0);
    expect(listed.out.split('\n')[0]).toMatch(/^ACCOUNT\s+NAME\s+CREATED\s+ACTIVE KEYS\s+KEYS$/);
    expect(listed.out).toMatch(new RegExp(`${accountId}\\s+acme rides\\s+\\S+\\s+2\\s`));

    const keys = await cli('keys', 'list', accountId!);
    expect(keys.out).toContain(second.id);
    expect(keys.out.split('\n')).toHaveLength(3);

    const revoked = await cli('keys', 'revoke', second.id);
    expect(revoked).toMatchObject({ code: 0, err: '' });
    expect(revoked.out).toContain(`revoked  ${second.id}`);
    expect(await sessionStatus(second.key)).toBe(401);
    expect(await sessionStatus(key!)).toBe(200);
  });

  it('widens the countries an account may reach, and allows special-rate numbers, per account', async () => {
    const created = await json<{ account: { id: string }; apiKey: { key: string } }>('accounts', 'create', 'globex');
    const create = async (number: string) =>
      (
        await fetch(`${broker.url}/v1/sessions`, {
          method: 'POST',
          headers: { authorization: `Bearer ${created.apiKey.key}`, 'content-type': 'application/json' },
          body: JSON.stringify({ channel: 'voice', participants: [{ number: '+2348030000301' }, { number }] }),
        })
      ).status;
    expect(await create('+447400123456')).toBe(422);

    const widened = await cli('accounts', 'destinations', created.account.id, 'ng,gb');
    expect(widened).toMatchObject({ code: 0, err: '' });
    expect(widened.out).toMatch(/allowed countries {2}GB, NG/);
    expect(await create('+447400123456')).toBe(201);
    expect(await create('+449090000000')).toBe(422);

    expect((await cli('accounts', 'destinations', created.account.id, '--special-rate', 'allow')).out).toMatch(/special-rate {7}allowed/);
    expect(await create('+449090000000')).toBe(201);
    expect((await cli('accounts', 'destinations', created.account.id, '--special-rate', 'maybe')).code).not.toBe(0);
  });

  it('reveals once the webhook secret of an account nobody saw it for (one made from BROKER_API_KEY)', async () => {
    const { accounts } = await json<{ accounts: Array<{ id: string; apiKeys: Array<{ label: string | null }> }> }>('accounts', 'list');
    const fromEnvironment = accounts.find((a) => a.apiKeys.some((k) => k.label === 'BROKER_API_KEY'))!;
    const revealed = await cli('accounts', 'reveal-secret', fromEnvironment.id);
    expect(revealed).toMatchObject({ code: 0, err: '' });
    const secret = /webhook secret {2}(whsec_\S+)/.exec(revealed.out)?.[1];
    expect(secret).toBeDefined();
    // The account itself now finds it shown.
    const status = await fetch(`${broker.url}/v1/account/webhook-secret`, { headers: { authorization: `Bearer ${API_KEY}` } });
    expect(await status.json()).toMatchObject({ configured: true, revealed: true });
    expect((await cli('accounts', 'reveal-secret', fromEnvironment.id)).code).toBe(1);
  });

  it('lists providers with their breaker state, and disables and enables one', async () => {
    const listed = await cli('providers', 'list');
    expect(listed.code).toBe(0);
    const [header, primary, failover] = listed.out.split('\n');
    expect(header).toMatch(/^PROVIDER\s+STATE\s+ROUTING\s+SINCE\s+OPENED AT\s+FAILURES\s+ERROR RATE\s+LAST ERROR$/);
    expect(primary).toMatch(/^primary\s+CLOSED\s+enabled\s/);
    expect(failover).toMatch(/^failover\s+CLOSED\s+enabled\s/);

    const disabled = await cli('providers', 'disable', 'primary', '--reason', 'carrier maintenance');
    expect(disabled).toEqual({ code: 0, out: 'primary: disabled (breaker CLOSED)', err: '' });
    expect((await cli('providers', 'list')).out).toMatch(/\nprimary\s+CLOSED\s+disabled\s/);
    const health = (await (await fetch(`${broker.url}/v1/health/cpaas`)).json()) as {
      providers: Array<{ name: string; disabled: boolean }>;
    };
    expect(health.providers.find((p) => p.name === 'primary')?.disabled).toBe(true);

    const enabled = await cli('providers', 'enable', 'primary');
    expect(enabled).toEqual({ code: 0, out: 'primary: enabled (breaker CLOSED)', err: '' });
  });

  it('adds proxy numbers and lists the pool, per provider', async () => {
    const added = await cli('numbers', 'add', 'failover', '+2349020009901', '--capabilities', 'sms');
    expect(added.code).toBe(0);
    expect(added.out).toMatch(/^added {2}\S+ {2}failover {2}\+2349020009901 {2}sms$/);

    const listed = await cli('numbers', 'list', '--provider', 'failover');
    expect(listed.code).toBe(0);
    const lines = listed.out.split('\n');
    expect(lines[0]).toMatch(/^ID\s+PROVIDER\s+NUMBER\s+CAPABILITIES\s+ENABLED\s+ACTIVE SESSIONS\s+ACCOUNT$/);
    expect(lines.slice(1).every((line) => /^\S+\s+failover\s/.test(line))).toBe(true);
    expect(listed.out).toMatch(/\+2349020009901\s+sms\s+yes\s+0\s+shared$/m);

    const pool = await json<{ numbers: Array<{ id: string; number: string }> }>('numbers', 'list');
    const id = pool.numbers.find((n) => n.number === '+2349020009901')!.id;
    expect((await cli('numbers', 'disable', id)).out).toContain(`disabled  ${id}`);
    expect((await cli('numbers', 'list', '--provider', 'failover')).out).toMatch(/\+2349020009901\s+sms\s+no\s/);
  });

  it('dedicates a proxy number to one account and returns it to the shared pool', async () => {
    const created = await cli('accounts', 'create', 'fleet with its own numbers');
    const accountId = /account {2}(\S+)/.exec(created.out)![1];
    const added = await json<{ id: string }>('numbers', 'add', 'primary', '+2349010009902');

    const dedicated = await cli('numbers', 'dedicate', added.id, accountId);
    expect(dedicated).toEqual({ code: 0, out: `dedicated  ${added.id}  primary  +2349010009902  to ${accountId}`, err: '' });
    expect((await cli('numbers', 'list', '--provider', 'primary')).out).toMatch(new RegExp(`\\+2349010009902\\s.*\\s${accountId}$`, 'm'));

    expect((await cli('numbers', 'share', added.id)).out).toBe(`shared  ${added.id}  primary  +2349010009902`);
    expect((await cli('numbers', 'list', '--provider', 'primary')).out).toMatch(/\+2349010009902\s.*\sshared$/m);

    const unknown = await cli('numbers', 'dedicate', added.id, '7f1d5c0a-0000-4000-8000-000000000000');
    expect(unknown.code).toBe(1);
    expect(unknown.err).toMatch(/^broker: accountId: no account .*\(422 /);
  });

  it('prints the broker’s problem detail on one line, with exit code 1', async () => {
    expect(await cli('providers', 'disable', 'nope')).toEqual({
      code: 1,
      out: '',
      err: 'broker: No provider named "nope". (404 Unknown provider)',
    });
    const badNumber = await cli('numbers', 'add', 'primary', '12345');
    expect(badNumber.code).toBe(1);
    expect(badNumber.err).toMatch(/^broker: number: .*E\.164.* \(400 [^)]+\)$/);
    expect((await cli('keys', 'revoke', '7f1d5c0a-0000-4000-8000-000000000000')).code).toBe(1);

    const wrongToken = await runCli(
      ['accounts', 'list'],
      { url: broker.url, adminToken: 'not-the-admin-token' },
      { stdout: () => undefined, stderr: () => undefined },
    );
    expect(wrongToken).toBe(1);
  });

  it('shows an account’s session with its channels, sends a text into it and lists its interactions, with the API key', async () => {
    const created = await fetch(`${broker.url}/v1/sessions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        channels: ['voice', 'sms'],
        participants: [{ number: '+2348035550001' }, { number: '+2348035550002' }],
        idleTtlSeconds: 600,
      }),
    });
    const session = (await created.json()) as { id: string; proxyNumber: string };
    const as = async (...argv: string[]): Promise<CliResult> => {
      const out: string[] = [];
      const err: string[] = [];
      const code = await runCli(argv, { url: broker.url, apiKey: API_KEY }, { stdout: (t) => out.push(t), stderr: (t) => err.push(t) });
      return { code, out: out.join('\n'), err: err.join('\n') };
    };

    const shown = await as('sessions', 'show', session.id);
    expect(shown.code).toBe(0);
    expect(shown.out).toContain('channels     voice,sms');
    expect(shown.out).toContain(`proxy        ${session.proxyNumber} on primary`);
    expect(shown.out).toMatch(/or 600 s after its last interaction/);

    const sent = await as('sessions', 'message', session.id, '+2348035550001', 'Your driver has arrived');
    expect(sent).toMatchObject({ code: 0, err: '' });
    expect(sent.out).toMatch(new RegExp(`^sent  \\S+  sms  \\${session.proxyNumber} -> \\+2348035550001  relayed$`));

    const listed = await as('sessions', 'interactions', session.id);
    expect(listed.out).toMatch(/^INTERACTION\s+CHANNEL\s+FROM\s+TO\s+STATUS/);
    expect(listed.out).toMatch(/\ssms\s+\+\d+\s+\+2348035550001\s+relayed\s/);

    // An admin token is not an account's key; a session of another account, or none, is the broker's 404.
    expect(await cli('sessions', 'show', session.id)).toEqual({
      code: 2,
      out: '',
      err: 'broker: no API key: pass --api-key or set BROKER_API_KEY (see --help)',
    });
    const missing = await as('sessions', 'show', '7f1d5c0a-0000-4000-8000-000000000000');
    expect(missing).toMatchObject({ code: 1, err: 'broker: No session with this id exists for your account. (404 Session not found)' });
    const notParticipant = await as('sessions', 'message', session.id, '+2348035550009', 'hi');
    expect(notParticipant.code).toBe(1);
    expect(notParticipant.err).toMatch(/not a participant.*\(422 Not a participant\)$/);
  });

  it('shows, sets and turns off the account’s session rescue with its API key', async () => {
    const as = async (...argv: string[]): Promise<CliResult> => {
      const out: string[] = [];
      const err: string[] = [];
      const code = await runCli(argv, { url: broker.url, apiKey: API_KEY }, { stdout: (t) => out.push(t), stderr: (t) => err.push(t) });
      return { code, out: out.join('\n'), err: err.join('\n') };
    };
    expect(await as('rescue', 'show')).toEqual({ code: 0, out: 'rescue  off: sessions stay on their provider until they end', err: '' });
    expect(await as('rescue', 'set', '300', 'Reply here to keep talking to your driver')).toEqual({
      code: 0,
      out: 'rescue  on: sessions move off a provider OPEN for 300 s\nnotice  Reply here to keep talking to your driver',
      err: '',
    });
    const read = await fetch(`${broker.url}/v1/account/rescue`, { headers: { authorization: `Bearer ${API_KEY}` } });
    expect(await read.json()).toEqual({ enabled: true, afterSeconds: 300, notice: 'Reply here to keep talking to your driver' });
    expect((await as('rescue', 'set', '0')).out).toBe('rescue  on: sessions move off a provider OPEN for 0 s\nnotice  none');
    // What the CLI can tell is wrong is a usage error; what the broker refuses is its problem, on one line.
    expect(await as('rescue', 'set', 'soon')).toMatchObject({ code: 2, err: expect.stringContaining('after-seconds is a whole number') });
    expect(await as('rescue', 'set', '604801')).toMatchObject({ code: 1, err: expect.stringMatching(/^broker: afterSeconds: .*\(400 /) });
    expect(await as('rescue', 'off', '--json')).toMatchObject({ code: 0, out: expect.stringContaining('"enabled": false') });
    expect((await cli('rescue', 'show')).code).toBe(2);
  });

  it('runs as `npm run broker -- <command>`, reading BROKER_URL and ADMIN_TOKEN', async () => {
    const result = await new Promise<CliResult>((done, fail) => {
      const child = spawn('npm', ['run', '--silent', 'broker', '--', 'providers', 'list'], {
        env: { ...process.env, BROKER_URL: broker.url, ADMIN_TOKEN },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let out = '';
      let err = '';
      child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
      child.once('error', fail);
      child.once('close', (code) => done({ code: code ?? -1, out, err }));
    });
    expect(result.code).toBe(0);
    expect(result.out).toMatch(/^PROVIDER\s+STATE/);
    expect(result.out).toMatch(/\nprimary\s+CLOSED\s+enabled/);
  }, 240_000);
});

describe('operator CLI: text from a provider reaches the terminal without its control characters (issue #29)', () => {
  let broker: BrokerHarness;
  let twilio: FaultProxy;

  beforeAll(async () => {
    // Twilio, as far as the adapter can tell: every request answered 503 with an error text of the vendor's choosing.
    twilio = await startFaultProxy(() => 'http://127.0.0.1:9');
    twilio.always({
      kind: 'answer',
      status: 503,
      contentType: 'application/json',
      body: JSON.stringify({ code: 20500, message: 'internal \u001b[2J\u001b]0;pwned\u0007error \u009b6n\u202eboth' }),
    });
    broker = await startBroker({
      ADMIN_TOKEN,
      PROVIDERS: `primary=twilio:${twilio.url}`,
      PUBLIC_URL: 'https://broker.example.com',
      PROVIDER_PRIMARY_ACCOUNT_SID: `AC${'0123456789abcdef'.repeat(2)}`,
      PROVIDER_PRIMARY_AUTH_TOKEN: 'fedcba9876543210'.repeat(2),
    });
  });
  afterAll(async () => {
    await broker?.close();
    await twilio?.close();
  });

  it("prints the vendor's error text as one line of plain text", async () => {
    const err: string[] = [];
    const code = await runCli(
      ['numbers', 'import', '--provider', 'primary'],
      { url: broker.url, adminToken: ADMIN_TOKEN },
      { stdout: () => undefined, stderr: (t) => err.push(t) },
    );
    expect(code).toBe(1);
    expect(err).toHaveLength(1);
    expect(err[0]).toContain('internal [2J]0;pwnederror 6nboth');
    expect(err[0]).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u202a-\u202e]/);
  });
});
