/** `npm run broker -- <command>`: the operator CLI's entry point. */
import { openInBrowser } from './browser';
import { runCli } from './cli';
import { readCliEnvironment } from './config';

const io = {
  stdout: (text: string) => process.stdout.write(`${text}\n`),
  stderr: (text: string) => process.stderr.write(`${text}\n`),
  open: (url: string) => openInBrowser(url),
};

runCli(process.argv.slice(2), readCliEnvironment(), io)
  .then((code) => {
    process.exitCode = code;
  })
  .catch((error: unknown) => {
    io.stderr(`broker: unexpected failure: ${error instanceof Error ? error.message : String(error)}`);
    process.exitCode = 1;
  });
