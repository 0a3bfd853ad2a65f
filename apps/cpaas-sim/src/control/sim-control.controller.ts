import { Body, Controller, Delete, Get, HttpCode, Param, Post, Put, Query, Res, UseGuards } from '@nestjs/common';
import type { Response } from 'express';
import { DEFAULT_FAULTS, type FaultSettings } from '../faults/fault-settings';
import { simValidationPipe } from '../problem/sim-validation';
import type { SimCallRecord } from '../providers/call-log';
import { SimulatedProviders } from '../providers/simulated-providers';
import { InboundEvents } from '../webhooks/inbound-events';
import { CallLogQueryDto } from './dto/call-log-query.dto';
import { FaultSettingsDto } from './dto/fault-settings.dto';
import { InboundTriggerDto } from './dto/inbound-trigger.dto';
import { LoopbackOnlyGuard } from './loopback-only.guard';
import { StatusWebhooksDto } from './dto/status-webhooks.dto';

interface ProviderSummary {
  name: string;
  faults: FaultSettings;
  statusWebhooks: boolean;
  calls: number;
}

/** The simulator's own controls: fault switches, call logs, inbound triggers. Not part of any provider's API. */
@UseGuards(LoopbackOnlyGuard)
@Controller('_sim')
export class SimControlController {
  constructor(
    private readonly providers: SimulatedProviders,
    private readonly inbound: InboundEvents,
  ) {}

  @Get('health')
  health(): { status: 'ok' } {
    return { status: 'ok' };
  }

  @Get('providers')
  list(): ProviderSummary[] {
    return this.providers.all().map((p) => ({ name: p.name, faults: p.faults, statusWebhooks: p.statusWebhooks, calls: p.calls.size }));
  }

  /** Every provider back to `ok`, logs cleared, receipts at their default. */
  @Post('reset')
  @HttpCode(204)
  reset(): void {
    this.providers.reset();
  }

  @Get('providers/:name/faults')
  faults(@Param('name') name: string): FaultSettings {
    return this.providers.get(name).faults;
  }

  @Put('providers/:name/faults')
  setFaults(@Param('name') name: string, @Body(simValidationPipe) body: FaultSettingsDto): FaultSettings {
    const provider = this.providers.get(name);
    provider.faults = {
      mode: body.mode ?? DEFAULT_FAULTS.mode,
      errorRate: body.errorRate ?? DEFAULT_FAULTS.errorRate,
      latencyMs: body.latencyMs ?? DEFAULT_FAULTS.latencyMs,
    };
    return provider.faults;
  }

  @Get('providers/:name/calls')
  calls(@Param('name') name: string, @Query(simValidationPipe) query: CallLogQueryDto): SimCallRecord[] {
    const records = this.providers.get(name).calls.list();
    const matching = query.type ? records.filter((record) => record.type === query.type) : records;
    return query.limit ? matching.slice(-query.limit) : matching;
  }

  @Delete('providers/:name/calls')
  @HttpCode(204)
  clearCalls(@Param('name') name: string): void {
    this.providers.get(name).calls.clear();
  }

  @Get('providers/:name/status-webhooks')
  statusWebhooks(@Param('name') name: string): { enabled: boolean } {
    return { enabled: this.providers.get(name).statusWebhooks };
  }

  @Put('providers/:name/status-webhooks')
  setStatusWebhooks(@Param('name') name: string, @Body(simValidationPipe) body: StatusWebhooksDto): { enabled: boolean } {
    const provider = this.providers.get(name);
    provider.statusWebhooks = body.enabled;
    return { enabled: provider.statusWebhooks };
  }

  /** Answers with the broker's own status and body; `x-sim-*` headers carry the ids the provider used. */
  @Post('providers/:name/inbound')
  async inboundEvent(
    @Param('name') name: string,
    @Body(simValidationPipe) body: InboundTriggerDto,
    @Res() response: Response,
  ): Promise<void> {
    const result = await this.inbound.deliver(name, body);
    response.status(result.status).set(result.headers);
    if (result.contentType) response.type(result.contentType);
    response.send(result.body);
  }
}
