import { ApiProperty } from '@nestjs/swagger';
import { twilioSid } from '../../common/twilio-sid';
import type { Account } from '../account.entity';

/** The account an API key acts for, as it sees itself. */
export class CurrentAccountDto {
  @ApiProperty()
  id: string;

  @ApiProperty()
  name: string;

  @ApiProperty({
    example: 'AC0f8fad5bd9cb469fa16570867728950e',
    description:
      'The account as Twilio names one: the user name of the Twilio-Proxy-compatible API (`/compat/twilio-proxy`, Basic auth with the API key as the password; docs/twilio-proxy-migration.md).',
  })
  twilioAccountSid: string;

  @ApiProperty()
  createdAt: string;

  static from(account: Account): CurrentAccountDto {
    return {
      id: account.id,
      name: account.name,
      twilioAccountSid: twilioSid('AC', account.id),
      createdAt: account.createdAt.toISOString(),
    };
  }
}
