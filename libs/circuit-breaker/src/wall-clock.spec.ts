import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

describe('the core', () => {
  it('reads no wall clock: all time comes from the injected scheduler', () => {
    const dir = join(process.cwd(), 'libs/circuit-breaker/src');
    const core = readdirSync(dir).filter((f) => f.endsWith('.ts') && !f.endsWith('.spec.ts'));
    expect(core).toContain('circuit-breaker.ts');
    const offenders = core.flatMap((file) =>
      readFileSync(join(dir, file), 'utf8')
        .split('\n')
        .flatMap((line, i) =>
          /\bDate\.now\b|\bnew Date\b|\bsetTimeout\b|\bsetInterval\b|\bsetImmediate\b|\bperformance\.now\b|\bprocess\.hrtime\b/.test(line)
            ? [`${file}:${i + 1}`]
            : [],
        ),
    );
    expect(offenders).toEqual([]);
  });

  it('imports nothing from NestJS', () => {
    const dir = join(process.cwd(), 'libs/circuit-breaker/src');
    const files = readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts'));
    expect(files.filter((f) => /from '@nestjs\//.test(readFileSync(join(dir, f), 'utf8')))).toEqual([]);
  });
});
