/**
 * The SDK as it is installed until it is published: `npm pack` in libs/sdk, `npm install` of the tarball
 * into an empty project, then used from CommonJS (`require`), from ESM (`import`) and from TypeScript
 * with Node's own module resolution, as the SDK README says.
 */
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const ROOT = process.cwd();
const SDK = join(ROOT, 'libs/sdk');

function run(command: string, args: string[], cwd: string): string {
  return execFileSync(command, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 180_000 });
}

describe('the SDK from a packed tarball', () => {
  let dir: string;
  let app: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'sdk-pack-'));
    app = join(dir, 'app');
    run('npm', ['pack', '--pack-destination', dir, '--silent'], SDK);
    const [tarball] = (await readdir(dir)).filter((name) => name.endsWith('.tgz'));
    await mkdir(app);
    await writeFile(join(app, 'package.json'), JSON.stringify({ name: 'integrator-app', private: true }));
    // No runtime dependency: the install needs nothing from a registry.
    run('npm', ['install', '--offline', '--no-audit', '--no-fund', '--silent', join(dir, tarball)], app);
  }, 240_000);

  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('holds the CommonJS build, the ESM build, their declarations, the README and the license, nothing else', async () => {
    const installed = join(app, 'node_modules/@session-broker/sdk');
    const top = (await readdir(installed)).sort();
    expect(top).toEqual(['LICENSE', 'README.md', 'dist', 'package.json']);
    // Publishable as it is: a license a legal team can approve, shipped with its text, and public (it is scoped).
    const manifest = JSON.parse(await readFile(join(installed, 'package.json'), 'utf8')) as Record<string, unknown>;
    expect(manifest).toMatchObject({ license: 'Apache-2.0', publishConfig: { access: 'public' } });
    expect(manifest.private).toBeUndefined();
    expect(await readFile(join(installed, 'LICENSE'), 'utf8')).toBe(await readFile(join(ROOT, 'LICENSE'), 'utf8'));
    const dist = await readdir(join(installed, 'dist'));
    expect(dist).toEqual(expect.arrayContaining(['index.js', 'index.d.ts', 'esm']));
    expect(dist.some((name) => name.includes('.spec.'))).toBe(false);
  });

  it('works from require and from import: one version, the same public names', () => {
    const script = `const sdk = require('@session-broker/sdk'); console.log(JSON.stringify([sdk.SDK_VERSION, Object.keys(sdk).sort()]));`;
    const fromRequire = JSON.parse(run('node', ['-e', script], app)) as [string, string[]];
    const module = `import * as sdk from '@session-broker/sdk'; console.log(JSON.stringify([sdk.SDK_VERSION, Object.keys(sdk).sort()]));`;
    const fromImport = JSON.parse(run('node', ['--input-type=module', '-e', module], app)) as [string, string[]];
    expect(fromImport).toEqual(fromRequire);
    expect(fromRequire[1]).toEqual(expect.arrayContaining(['BrokerClient', 'constructEvent', 'verifyWebhook', 'BrokerApiError']));
  });

  it('type-checks a consumer in ESM and in CommonJS with Node 16+ resolution', async () => {
    const consumer = `import { BrokerClient, constructEvent, type WebhookEvent } from '@session-broker/sdk';
const client = new BrokerClient({ baseUrl: 'http://127.0.0.1:3000', apiKey: 'k' });
export async function secret(): Promise<string | undefined> {
  return (await client.setCallbackUrl('https://example.com/hooks')).webhookSecret;
}
export function relayedTo(body: string, headers: Record<string, string>): string | undefined {
  const event: WebhookEvent = constructEvent(body, headers, 'whsec_c2VjcmV0');
  return event.type === 'message.relayed' ? event.data.to : undefined;
}
`;
    await writeFile(join(app, 'consumer.mts'), consumer);
    await writeFile(join(app, 'consumer.cts'), consumer);
    const tsc = join(ROOT, 'node_modules/typescript/bin/tsc');
    const flags = ['--noEmit', '--strict', '--module', 'nodenext', '--target', 'es2022', '--skipLibCheck', 'false'];
    const types = ['--typeRoots', join(ROOT, 'node_modules/@types'), '--types', 'node'];
    expect(() => run('node', [tsc, ...flags, ...types, 'consumer.mts', 'consumer.cts'], app)).not.toThrow();
  }, 120_000);
});
