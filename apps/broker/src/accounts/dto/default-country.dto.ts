import { ApiProperty } from '@nestjs/swagger';
import { isSupportedCountry } from 'libphonenumber-js/max';
import { registerDecorator } from 'class-validator';

/** An ISO 3166 alpha-2 code whose numbering plan libphonenumber knows, or null (left out is not null: refused). */
function PhoneCountry(): PropertyDecorator {
  return (target, propertyName) =>
    registerDecorator({
      name: 'phoneCountry',
      target: target.constructor,
      propertyName: propertyName as string,
      options: { message: 'country must be an ISO 3166 alpha-2 code in upper case, like NG, or null to clear it' },
      validator: {
        validate: (value: unknown) =>
          value === null || (typeof value === 'string' && /^[A-Z]{2}$/.test(value) && isSupportedCountry(value)),
      },
    });
}

export class SetDefaultCountryDto {
  @ApiProperty({
    type: String,
    nullable: true,
    example: 'NG',
    description:
      'Participant numbers written without + are read as numbers of this country (08031234567 → +2348031234567); null: E.164 only.',
  })
  @PhoneCountry()
  country: string | null;
}

export class DefaultCountryDto {
  @ApiProperty({ type: String, nullable: true, example: 'NG' })
  country: string | null;
}
