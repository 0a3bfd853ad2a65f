import { Controller, HttpCode, Inject, Param, ParseUUIDPipe, Post, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { AdminTokenGuard } from '../../accounts';
import { ProblemException } from '../../common/problem';
import { secretAlreadyShown, WebhookSecrets } from '../../accounts/webhook-secrets/webhook-secrets';
import { RevealedWebhookSecretDto } from './dto/account-webhooks.dto';

const noAccount = () => new ProblemException({ status: 404, slug: 'not-found', title: 'Not found', detail: 'No account with this id.' });

/** The operator's side of the one-time reveal (`broker accounts reveal-secret <id>`): same once-only flag as the account's. */
@ApiTags('admin')
@ApiBearerAuth('admin-token')
@UseGuards(AdminTokenGuard)
@Controller('v1/admin/accounts')
export class WebhookSecretsAdminController {
  constructor(@Inject(WebhookSecrets) private readonly secrets: WebhookSecrets) {}

  @Post(':id/webhook-secret/reveal')
  @HttpCode(200)
  @ApiOperation({
    summary: "An account's current webhook secret, if it was never shown: shown this once. 409 once it was.",
  })
  @ApiOkResponse({ type: RevealedWebhookSecretDto })
  async reveal(@Param('id', new ParseUUIDPipe({ exceptionFactory: noAccount })) id: string): Promise<RevealedWebhookSecretDto> {
    if (!(await this.secrets.accountExists(id))) throw noAccount();
    const revealed = await this.secrets.reveal(id);
    if (!revealed) throw secretAlreadyShown();
    return revealed;
  }
}
