import { IsIn, IsInt, IsNumber, IsOptional, Max, Min } from 'class-validator';
import { FAULT_MODES, type FaultMode } from '../../faults/fault-settings';

/** `PUT /_sim/providers/:name/faults`: fields left out take their defaults (ok, 0, 0). */
export class FaultSettingsDto {
  @IsOptional()
  @IsIn(FAULT_MODES)
  mode?: FaultMode;

  @IsOptional()
  @IsNumber({ allowNaN: false, allowInfinity: false })
  @Min(0)
  @Max(1)
  errorRate?: number;

  @IsOptional()
  @IsInt()
  @Min(0)
  @Max(600_000)
  latencyMs?: number;
}
