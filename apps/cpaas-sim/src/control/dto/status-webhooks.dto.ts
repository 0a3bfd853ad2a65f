import { IsBoolean } from 'class-validator';

/** `PUT /_sim/providers/:name/status-webhooks`: delivery receipts on or off. */
export class StatusWebhooksDto {
  @IsBoolean()
  enabled: boolean;
}
