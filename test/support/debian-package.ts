import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

/**
 * A test that drives a program from Debian (Chromium, Prometheus) gets it with apt when it is missing and
 * we are root with apt-get, as `.ci/run` does before the suite; otherwise it says what to install.
 */
export function ensureDebianPackage(binary: string, debianPackage: string): void {
  if (existsSync(binary)) return;
  const root = process.getuid?.() === 0;
  const apt = spawnSync('sh', ['-c', 'command -v apt-get']).status === 0;
  if (!root || !apt)
    throw new Error(`${binary} is missing: install Debian's ${debianPackage} package (apt-get install -y ${debianPackage})`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  for (const args of [['update'], ['install', '-y', '--no-install-recommends', debianPackage]]) {
    const result = spawnSync('apt-get', args, { env, encoding: 'utf8', timeout: 900_000 });
    if (result.status !== 0) throw new Error(`apt-get ${args.join(' ')} failed: ${result.stderr}`);
  }
}
