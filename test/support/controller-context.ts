/**
 * One controller over HTTP with its services replaced by the spec's mocks (immich's controller specs):
 * around it the broker's own request pipeline, as `AppModule` wires it: the authenticating guards
 * (`ApiKeyGuard`, `AdminTokenGuard`) with the real rate limits, the body reader that runs after
 * authentication, the validation pipe and the problem+json filter. So a spec asserts what a client
 * notices (401 without a key, a 400 naming the bad field, 404 for another account's session, the status
 * of a success) without a database, a provider or the rest of the app.
 *
 * Two accounts exist: requests with `ACCOUNT.key` act for `ACCOUNT.id`, with `OTHER_ACCOUNT.key` for the
 * other; any other key is unknown. The admin token is `ADMIN_TOKEN` unless the spec's environment unsets it.
 */
import type { Server } from 'node:http';
import { type INestApplication, type ModuleMetadata, type Provider, type Type } from '@nestjs/common';
import { APP_FILTER, APP_GUARD, APP_PIPE } from '@nestjs/core';
import { Test } from '@nestjs/testing';
import request from 'supertest';
import { PrototypedExpressAdapter } from '@app/http';
import { ManualClock } from '@app/testing';
import { AccountsService, AdminTokenGuard, ApiKeyGuard, RateLimits, type Principal } from '../../apps/broker/src/accounts';
import { CLOCK } from '../../apps/broker/src/common/clock';
import { RequestBodyGuard } from '../../apps/broker/src/common/http';
import { PROBLEM_CONTENT_TYPE, ProblemDetailsFilter, createValidationPipe } from '../../apps/broker/src/common/problem';
import { BROKER_CONFIG, loadConfig, type BrokerConfig } from '../../apps/broker/src/config';
import { BrokerMetrics } from '../../apps/broker/src/metrics/broker-metrics';

export const ACCOUNT = { id: '00000000-0000-4000-8000-00000000000a', key: 'sk_test_account_a_0123456789abcdef' } as const;
export const OTHER_ACCOUNT = { id: '00000000-0000-4000-8000-00000000000b', key: 'sk_test_account_b_0123456789abcdef' } as const;
export const ADMIN_TOKEN = 'admin-token-for-controller-specs';
export const T0 = Date.parse('2026-07-15T12:00:00.000Z');

export interface ControllerContext {
  /** A supertest agent on the app: `ctx.http().get('/v1/...')`. */
  http(): ReturnType<typeof request>;
  config: BrokerConfig;
  clock: ManualClock;
  close(): Promise<void>;
}

export interface ControllerSetup {
  /** Modules the controller needs as they are (Terminus for the health routes). */
  imports?: ModuleMetadata['imports'];
  /** The controller's collaborators, as `{ provide: Service, useValue: mock }`. */
  providers?: Provider[];
  /** Variables over the spec defaults (ADMIN_TOKEN set), read by `loadConfig` as at start-up. */
  env?: Record<string, string | undefined>;
  /** The rest of AccountsService, for the controllers that use it beyond authentication. */
  accounts?: Partial<AccountsService>;
}

const PRINCIPALS = new Map<string, Principal>([
  [ACCOUNT.key, { accountId: ACCOUNT.id, apiKeyId: '00000000-0000-4000-8000-0000000000a1' }],
  [OTHER_ACCOUNT.key, { accountId: OTHER_ACCOUNT.id, apiKeyId: '00000000-0000-4000-8000-0000000000b1' }],
]);

export async function controllerSetup(controllers: Type[], setup: ControllerSetup = {}): Promise<ControllerContext> {
  const config = loadConfig({ ADMIN_TOKEN, ...setup.env });
  const clock = new ManualClock(T0);
  const accounts = { authenticate: (key: string) => Promise.resolve(PRINCIPALS.get(key) ?? null), ...setup.accounts };
  const module = await Test.createTestingModule({
    imports: setup.imports ?? [],
    controllers,
    providers: [
      { provide: BROKER_CONFIG, useValue: config },
      { provide: CLOCK, useValue: clock },
      { provide: AccountsService, useValue: accounts },
      BrokerMetrics,
      RateLimits,
      ApiKeyGuard,
      AdminTokenGuard,
      { provide: APP_FILTER, useClass: ProblemDetailsFilter },
      { provide: APP_PIPE, useFactory: createValidationPipe },
      { provide: APP_GUARD, useClass: RequestBodyGuard },
      ...(setup.providers ?? []),
    ],
  }).compile();
  // As createBrokerApp builds it: no body parser in front (the guards read bodies), the product's adapter.
  const app: INestApplication = module.createNestApplication(new PrototypedExpressAdapter(), { bodyParser: false, logger: false });
  await app.init();
  const server = app.getHttpServer() as Server;
  return { http: () => request(server), config, clock, close: () => app.close() };
}

export const bearer = (key: string): { authorization: string } => ({ authorization: `Bearer ${key}` });

/** What every refusal looks like on the wire: problem+json with the status in the body too. */
export function expectProblem(
  response: { status: number; headers: Record<string, string>; body: Record<string, unknown> },
  status: number,
  type?: string,
): void {
  expect(response.headers['content-type']).toContain(PROBLEM_CONTENT_TYPE);
  expect(response.body).toMatchObject({ status, title: expect.any(String), detail: expect.any(String) });
  expect(response.status).toBe(status);
  if (type !== undefined) expect(response.body.type).toBe(type);
}

/** A 400 whose `errors` name exactly these fields (each at least once). */
export function expectInvalidFields(
  response: { status: number; headers: Record<string, string>; body: Record<string, unknown> },
  fields: string[],
): void {
  expectProblem(response, 400, '/problems/validation-error');
  const named = new Set((response.body.errors as Array<{ field: string }>).map((e) => e.field));
  expect([...named].sort()).toEqual([...new Set(fields)].sort());
}
