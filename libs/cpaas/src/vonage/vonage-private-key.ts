/**
 * `PROVIDER_<NAME>_PRIVATE_KEY`: the Vonage application's private key, as PEM text (newlines may be
 * written `\n`, as env files do) or as the path of the `private.key` file the dashboard hands out.
 * Read and parsed once at start-up, so a bad key stops the start instead of failing every SMS.
 */
import { createPrivateKey } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';

/** A key file larger than this is not a key. */
const MAX_KEY_FILE_BYTES = 16 * 1024;

/** The PEM text of an RSA private key, or undefined when `value` is neither such PEM nor a file holding it. */
export function loadVonagePrivateKey(value: string): string | undefined {
  const pem = value.includes('-----BEGIN') ? value.replace(/\\n/g, '\n') : readKeyFile(value);
  if (pem === undefined) return undefined;
  try {
    // Vonage application keys are RSA; their JWTs are RS256.
    return createPrivateKey(pem).asymmetricKeyType === 'rsa' ? pem : undefined;
  } catch {
    return undefined;
  }
}

function readKeyFile(path: string): string | undefined {
  try {
    if (statSync(path).size > MAX_KEY_FILE_BYTES) return undefined;
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}
