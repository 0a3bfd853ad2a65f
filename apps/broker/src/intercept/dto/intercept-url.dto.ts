import { ApiProperty } from '@nestjs/swagger';
import { IsString, MaxLength, ValidateIf } from 'class-validator';

export class SetInterceptUrlDto {
  @ApiProperty({
    type: String,
    nullable: true,
    maxLength: 2048,
    example: 'https://example.com/hooks/intercept',
    description:
      'Asked, signed, before each relay and bridge of your sessions that name no interceptUrl of their own: 2xx lets it through, 403 blocks it. Null clears it. Public http(s) addresses only.',
  })
  @ValidateIf((dto: SetInterceptUrlDto) => dto.interceptUrl !== null)
  @IsString({ message: 'interceptUrl must be an http or https URL, or null' })
  @MaxLength(2048, { message: 'interceptUrl must be at most 2048 characters' })
  interceptUrl: string | null;
}

export class InterceptUrlDto {
  @ApiProperty({ type: String, nullable: true })
  interceptUrl: string | null;
}
