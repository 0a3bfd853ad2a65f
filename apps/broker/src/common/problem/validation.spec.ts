import { Type } from 'class-transformer';
import { IsString, ValidateNested } from 'class-validator';
import { ValidationProblem } from './problem';
import { createValidationPipe, unstorableTextAt } from './validation';

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

class InnerDto {
  @IsString()
  name: string;
}

class OuterDto {
  @ValidateNested()
  @Type(() => InnerDto)
  inner: InnerDto;
}

describe('the validation pipe', () => {
  it('refuses a binary value where a nested object belongs on every call, its class rules read once for the pipe', async () => {
    const pipe = createValidationPipe();
    const metadata = { type: 'body' as const, metatype: OuterDto };
    for (let call = 0; call < 3; call++) {
      await expect(pipe.transform({ inner: Buffer.from('bytes') }, metadata)).rejects.toMatchObject({
        errors: [{ field: 'inner', message: 'nested property inner must be either object or array' }],
      });
      await expect(pipe.transform({ inner: { name: 'ok' } }, metadata)).resolves.toBeInstanceOf(OuterDto);
      await expect(pipe.transform({ inner: { name: 1 } }, metadata)).rejects.toBeInstanceOf(ValidationProblem);
    }
  });
});
