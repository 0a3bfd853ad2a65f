import { Controller, Get, ServiceUnavailableException } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { HealthCheck, HealthCheckService, type HealthCheckResult } from '@nestjs/terminus';
import { ProblemException } from '../common/problem';
import { DatabaseHealthIndicator } from './database.health';
import { ProvidersHealthIndicator } from './providers.health';

const DATABASE_READY_TIMEOUT_MS = 1500;

@ApiTags('health')
@Controller('health')
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly database: DatabaseHealthIndicator,
    private readonly providers: ProvidersHealthIndicator,
  ) {}

  @Get()
  @ApiOperation({ summary: 'Liveness: the process is up and serving HTTP.' })
  live(): { status: 'ok' } {
    return { status: 'ok' };
  }

  @Get('ready')
  @HealthCheck()
  @ApiOperation({ summary: 'Readiness: a database server that takes writes answers in time, and some provider can take sessions.' })
  async ready(): Promise<HealthCheckResult> {
    try {
      return await this.health.check([
        () => this.database.check('database', DATABASE_READY_TIMEOUT_MS),
        () => this.providers.check('providers'),
      ]);
    } catch (error) {
      if (!(error instanceof ServiceUnavailableException)) throw error;
      const result = error.getResponse() as HealthCheckResult;
      const down = Object.keys(result.error ?? {});
      throw new ProblemException({
        status: 503,
        slug: 'not-ready',
        title: 'Not ready',
        detail: `Not ready: ${down.join(', ')} down.`,
        extensions: { checks: result.details },
      });
    }
  }
}
