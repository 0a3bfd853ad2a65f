import { Type } from 'class-transformer';
import { IsIn, IsInt, IsOptional, Max, Min } from 'class-validator';
import type { SimOperation } from '@app/cpaas';

const OPERATIONS: SimOperation[] = ['bind', 'unbind', 'sms', 'call', 'health'];

/** `GET /_sim/providers/:name/calls?type=sms&limit=20`: the newest `limit` records of that type. */
export class CallLogQueryDto {
  @IsOptional()
  @IsIn(OPERATIONS)
  type?: SimOperation;

  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(10_000)
  limit?: number;
}
