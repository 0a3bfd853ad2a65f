import { inspect } from 'node:util';
import { Secret } from './secret';

describe('Secret', () => {
  it('gives its value to reveal() only', () => {
    const secret = new Secret('0123456789abcdef');
    expect(secret.reveal()).toBe('0123456789abcdef');
    const shown = [String(secret), `${secret}`, JSON.stringify({ secret }), inspect({ nested: { secret } }), Object.keys(secret).join()];
    for (const text of shown) expect(text).not.toContain('0123456789abcdef');
  });
});
