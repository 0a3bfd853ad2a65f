import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  ArrayMaxSize,
  ArrayMinSize,
  ArrayUnique,
  IsArray,
  IsIn,
  IsOptional,
  IsString,
  IsUUID,
  Matches,
  MaxLength,
  ValidateIf,
} from 'class-validator';
import { E164, type Channel } from '../../common/phone-number';

export { E164 } from '../../common/phone-number';

export class AddProxyNumberDto {
  @ApiProperty({ example: 'primary' })
  @IsString()
  @MaxLength(32)
  provider: string;

  @ApiProperty({ example: '+2349010000011' })
  @Matches(E164, { message: 'number must be an E.164 number, like +2348030000001' })
  number: string;

  @ApiPropertyOptional({ type: [String], enum: ['sms', 'voice'], default: ['sms', 'voice'] })
  // Left out means both; null is not a list of capabilities.
  @ValidateIf((dto: AddProxyNumberDto) => dto.capabilities !== undefined)
  @IsArray({ message: 'capabilities must be a list of sms and/or voice' })
  @ArrayMinSize(1)
  @ArrayMaxSize(2)
  @ArrayUnique()
  @IsIn(['sms', 'voice'], { each: true })
  capabilities?: Channel[];
}

export class DedicateProxyNumberDto {
  @ApiProperty({ description: 'The account whose sessions alone get this number.' })
  @IsUUID('all', { message: 'accountId must be an account id (a UUID)' })
  accountId: string;
}

export class ListProxyNumbersQueryDto {
  @ApiPropertyOptional({ example: 'primary' })
  @IsOptional()
  @IsString()
  @MaxLength(32)
  provider?: string;
}

export class ProxyNumberDto {
  @ApiProperty()
  id: string;

  @ApiProperty()
  provider: string;

  @ApiProperty({ example: '+2349010000001' })
  number: string;

  @ApiProperty({ type: [String], enum: ['sms', 'voice'] })
  capabilities: Channel[];

  @ApiProperty()
  enabled: boolean;

  @ApiProperty({ type: String, nullable: true, description: 'The account this number is dedicated to; null: the shared pool.' })
  accountId: string | null;

  @ApiProperty({ description: 'Active sessions this number carries now.' })
  activeSessions: number;

  @ApiProperty()
  createdAt: string;
}

export class ProxyNumberListDto {
  @ApiProperty({ type: [ProxyNumberDto] })
  numbers: ProxyNumberDto[];
}
