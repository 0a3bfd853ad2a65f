import { ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsInt, IsOptional, Matches, Max, Min } from 'class-validator';

/**
 * A query number as a person writes it: decimal digits only. `Number()` would also read `0x10`, `1e1`,
 * `+5`, ` 5` and `0b11`; those are refused (NaN fails the validator) rather than read as something else.
 */
export const decimalInteger = ({ value }: { value: unknown }): unknown =>
  typeof value === 'string' ? (/^\d{1,9}$/.test(value) ? Number(value) : Number.NaN) : value;

const LIMIT_MESSAGE = 'limit must be a whole number from 1 to 200';

/** `?limit=&cursor=` of every cursor-paginated list. */
export class CursorPageQueryDto {
  @ApiPropertyOptional({ default: 50, minimum: 1, maximum: 200 })
  @IsOptional()
  @Transform(decimalInteger)
  // One message whatever is wrong: a value that is not a number would break all three rules at once.
  @IsInt({ message: LIMIT_MESSAGE })
  @Min(1, { message: LIMIT_MESSAGE })
  @Max(200, { message: LIMIT_MESSAGE })
  limit?: number;

  @ApiPropertyOptional({ description: 'From `nextCursor` of the previous page.' })
  @IsOptional()
  @Matches(/^[A-Za-z0-9_-]{1,200}$/, { message: 'cursor must be a nextCursor returned by this route' })
  cursor?: string;
}
