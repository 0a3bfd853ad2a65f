import { Body, Controller, Delete, Get, Param, ParseUUIDPipe, Post, Put, Query, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { AdminTokenGuard } from '../accounts';
import { ProblemException } from '../common/problem';
import {
  AddProxyNumberDto,
  DedicateProxyNumberDto,
  ListProxyNumbersQueryDto,
  ProxyNumberDto,
  ProxyNumberListDto,
} from './dto/proxy-number.dto';
import { ProxyNumbersService } from './proxy-numbers.service';

@ApiTags('admin')
@ApiBearerAuth('admin-token')
@UseGuards(AdminTokenGuard)
@Controller('v1/admin/numbers')
export class NumbersAdminController {
  constructor(private readonly numbers: ProxyNumbersService) {}

  @Get()
  @ApiOperation({ summary: 'The proxy-number pool, with how many active sessions each number carries.' })
  @ApiOkResponse({ type: ProxyNumberListDto })
  async list(@Query() query: ListProxyNumbersQueryDto): Promise<ProxyNumberListDto> {
    return { numbers: await this.numbers.list(query.provider) };
  }

  @Post()
  @ApiOperation({ summary: 'Add a number to a provider’s pool (or re-enable it).' })
  @ApiCreatedResponse({ type: ProxyNumberDto })
  add(@Body() body: AddProxyNumberDto): Promise<ProxyNumberDto> {
    return this.numbers.add(body.provider, body.number, body.capabilities);
  }

  @Delete(':id')
  @ApiOperation({ summary: 'Disable a number: no new sessions get it; sessions on it keep it until they end.' })
  @ApiOkResponse({ type: ProxyNumberDto })
  async disable(@Param('id', new ParseUUIDPipe({ exceptionFactory: () => notFound() })) id: string): Promise<ProxyNumberDto> {
    const number = await this.numbers.disable(id);
    if (!number) throw notFound();
    return number;
  }

  @Put(':id/account')
  @ApiOperation({ summary: 'Dedicate a number to one account: only its sessions get the number, the shared pool no longer does.' })
  @ApiOkResponse({ type: ProxyNumberDto })
  async dedicate(
    @Param('id', new ParseUUIDPipe({ exceptionFactory: () => notFound() })) id: string,
    @Body() body: DedicateProxyNumberDto,
  ): Promise<ProxyNumberDto> {
    return (await this.numbers.dedicate(id, body.accountId)) ?? throwNotFound();
  }

  @Delete(':id/account')
  @ApiOperation({ summary: 'Return a dedicated number to the shared pool.' })
  @ApiOkResponse({ type: ProxyNumberDto })
  async share(@Param('id', new ParseUUIDPipe({ exceptionFactory: () => notFound() })) id: string): Promise<ProxyNumberDto> {
    return (await this.numbers.dedicate(id, null)) ?? throwNotFound();
  }
}

function throwNotFound(): never {
  throw notFound();
}

function notFound(): ProblemException {
  return new ProblemException({ status: 404, slug: 'not-found', title: 'Not found', detail: 'No proxy number with this id.' });
}
