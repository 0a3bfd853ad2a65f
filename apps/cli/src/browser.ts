import { spawn } from 'node:child_process';

/**
 * Opens `url` with the platform's own opener (`open` on macOS, `start` on Windows, `xdg-open` elsewhere);
 * false when there is none to run. The opener runs detached: the CLI does not wait for a browser.
 */
export function openInBrowser(url: string, platform: NodeJS.Platform = process.platform): Promise<boolean> {
  const [command, args] =
    platform === 'darwin'
      ? ['open', [url]]
      : platform === 'win32'
        ? // `start` takes its first quoted argument as a window title; `&` would end cmd's command.
          ['cmd', ['/c', 'start', '""', url.replaceAll('&', '^&')]]
        : ['xdg-open', [url]];
  return new Promise((done) => {
    const child = spawn(command, args, { stdio: 'ignore', detached: true });
    child.once('error', () => done(false));
    child.once('spawn', () => {
      child.unref();
      done(true);
    });
  });
}
