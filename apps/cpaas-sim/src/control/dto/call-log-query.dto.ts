import { Type } from 'class-transformer';
import { IsIn, IsInt, IsOptional, Max, Min } from 'class-validator';
import type { ProviderOperation } from '@app/cpaas';

const OPERATIONS: ProviderOperation[] = ['bind', 'unbind', 'sms', 'call', 'health'];

/** `GET /_sim/providers/:name/calls?type=sms&limit=20`: the newest `limit` records of that type. */
export class CallLogQueryDto {
  @IsOptional()
  @IsIn(OPERATIONS)
  type?: ProviderOperation;

  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(10_000)
  limit?: number;
}
