import { Module } from '@nestjs/common';
import { DocsController } from './docs.controller';

/** `/docs`: the API's Swagger UI page (the OpenAPI document itself is SwaggerModule's, broker-app.ts). */
@Module({ controllers: [DocsController] })
export class DocsModule {}
