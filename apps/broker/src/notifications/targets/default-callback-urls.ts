import { Inject, Injectable } from '@nestjs/common';
import type { CallbackUrlDto } from '../api/dto/account-webhooks.dto';
import { WebhookSecrets } from '../../accounts/webhook-secrets/webhook-secrets';
import { CallbackUrlValidator } from './callback-url-validator';
import { DefaultCallbackUrlRepository } from './default-callback-url.repository';

/** Reads and sets an account's default callback URL (`/v1/account/callback-url`). */
@Injectable()
export class DefaultCallbackUrls {
  constructor(
    private readonly repository: DefaultCallbackUrlRepository,
    private readonly urls: CallbackUrlValidator,
    @Inject(WebhookSecrets) private readonly secrets: WebhookSecrets,
  ) {}

  async get(accountId: string): Promise<CallbackUrlDto> {
    return { callbackUrl: await this.repository.get(accountId) };
  }

  /** Sets it (public http(s) addresses only) or clears it (null). */
  async set(accountId: string, callbackUrl: string | null): Promise<CallbackUrlDto> {
    if (callbackUrl !== null) this.urls.assertAcceptable(callbackUrl);
    await this.repository.set(accountId, callbackUrl);
    // Deliveries will be signed: a secret the account has not seen yet is shown in this answer, once.
    const unseen = callbackUrl !== null ? await this.secrets.reveal(accountId) : null;
    return unseen ? { callbackUrl, webhookSecret: unseen.secret } : { callbackUrl };
  }
}
