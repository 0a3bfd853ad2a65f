import { freePort } from '@app/testing';
import { runCli, type CliIo } from './cli';
import { COMMANDS } from './commands';

function capture(): CliIo & { out: string[]; err: string[] } {
  const out: string[] = [];
  const err: string[] = [];
  return { out, err, stdout: (text) => out.push(text), stderr: (text) => err.push(text) };
}

async function run(argv: string[], env: { url?: string; adminToken?: string } = { adminToken: 'token-for-usage-tests' }) {
  const io = capture();
  const code = await runCli(argv, env, io);
  return { code, out: io.out.join('\n'), err: io.err.join('\n') };
}

/** A loopback port with nothing listening on it. */
const closedPort = freePort;

describe('operator CLI: command line', () => {
  it('prints help listing every command, with exit code 0', async () => {
    for (const argv of [['--help'], ['-h'], ['help'], ['providers', 'list', '--help']]) {
      const { code, out, err } = await run(argv, {});
      expect(code).toBe(0);
      expect(err).toBe('');
      for (const command of COMMANDS) expect(out).toContain(`broker ${command.words.join(' ')}`);
      expect(out).toContain('Exit codes: 0 ok, 1');
    }
  });

  it.each([
    [[], 'no command given'],
    [['providers'], 'unknown command "providers" (providers: list, disable, enable)'],
    [['provider', 'list'], 'unknown command "provider list"'],
    [['providers', 'disable'], 'expected <name>: broker providers disable <name> [--reason <text>]'],
    [['providers', 'list', 'extra'], 'expected no arguments'],
    [['numbers', 'add', 'primary'], 'expected <provider> <number>'],
    [['providers', 'list', '--reason', 'x'], '--reason does not apply to "providers list"'],
    [['providers', 'list', '--colour'], "Unknown option '--colour'"],
    [['numbers', 'list', '--provider'], "Option '--provider <value>' argument missing"],
    [['providers', 'list', '--url', 'not a url'], '--url is not a URL: "not a url"'],
    [['providers', 'list', '--url', 'ftp://broker'], '--url must be http or https'],
    [['numbers', 'add', 'primary', '+2349010000099', '--capabilities', 'sms,fax'], '--capabilities takes sms, voice or sms,voice'],
  ])('refuses %j with one line and exit code 2', async (argv, message) => {
    const { code, out, err } = await run(argv);
    expect(code).toBe(2);
    expect(out).toBe('');
    expect(err).toContain(message);
    expect(err).toMatch(/^broker: .*\(see --help\)$/);
  });

  it('needs an admin token, from --admin-token or ADMIN_TOKEN', async () => {
    const { code, err } = await run(['providers', 'list'], {});
    expect(code).toBe(2);
    expect(err).toBe('broker: no admin token: pass --admin-token or set ADMIN_TOKEN (see --help)');
  });

  it('exits 3 with one line when the broker cannot be reached, from --url or BROKER_URL', async () => {
    const url = `http://127.0.0.1:${await closedPort()}`;
    const byFlag = await run(['providers', 'list', '--url', url, '--admin-token', 'x']);
    expect(byFlag.code).toBe(3);
    expect(byFlag.err).toBe(`broker: cannot reach the broker at ${url}: ECONNREFUSED`);
    const byEnvironment = await run(['accounts', 'list'], { url, adminToken: 'x' });
    expect(byEnvironment.code).toBe(3);
    expect(byEnvironment.err).toContain(url);
  });
});

describe('operator CLI: ops open', () => {
  it('opens the ops page of the broker it talks to, with no admin token needed', async () => {
    const opened: string[] = [];
    const io = { ...capture(), open: (url: string) => Promise.resolve(opened.push(url) > 0) };
    const code = await runCli(['ops', 'open'], { url: 'http://127.0.0.1:3100/' }, io);
    expect(code).toBe(0);
    expect(opened).toEqual(['http://127.0.0.1:3100/ops']);
    expect(io.out).toEqual(['opening http://127.0.0.1:3100/ops in your browser']);
  });

  it('prints the URL to open by hand where no browser opener runs', async () => {
    const io = { ...capture(), open: () => Promise.resolve(false) };
    expect(await runCli(['ops', 'open'], {}, io)).toBe(0);
    expect(io.out).toEqual(['open http://127.0.0.1:3000/ops in a browser (no opener found here: open, start or xdg-open)']);
  });
});
