import { unstorableTextAt } from './validation';

describe('unstorableTextAt', () => {
  it('names the first value or key holding a NUL or a lone surrogate, at any depth', () => {
    expect(unstorableTextAt({ metadata: { note: 'a\u0000b' } })).toBe('metadata.note');
    expect(unstorableTextAt({ participants: [{ number: '+1' }, { number: '\ud800' }] })).toBe('participants[1].number');
    expect(unstorableTextAt({ metadata: { ['k\udc00']: 1 } })).toBe('metadata.k\udc00');
    expect(unstorableTextAt('x\u0000', 'id')).toBe('id');
  });

  it('accepts paired surrogates (emoji) and ordinary control-free text', () => {
    expect(unstorableTextAt({ text: 'hi 👋 \ud83d\ude00', n: 1, b: null, list: ['é', 'ü'] })).toBeUndefined();
  });
});
