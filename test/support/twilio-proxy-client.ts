/**
 * The `twilio` package's own client pointed at the broker's Twilio-Proxy-compatible API, as a migrating team
 * writes it (docs/twilio-proxy-migration.md: the RequestClient that sends `https://proxy.twilio.com` to the
 * broker), and, for the tests, one that also checks every answer against the response schema Twilio
 * publishes for its operation (`twilio_proxy_v1.json`, with ajv) and keeps what failed.
 */
import Ajv from 'ajv';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import twilio from 'twilio';
import { ADMIN_TOKEN } from './api-client';

export const TWILIO_PROXY_SPEC = resolve('node_modules/@twilio-alpha/mcp/twilio-oai/spec/json/twilio_proxy_v1.json');

type RequestOptions<T> = Parameters<InstanceType<typeof twilio.RequestClient>['request']>[0] & { data?: T };

/** The guide's RequestClient: Twilio Proxy's host goes to the broker's compat API (`…/compat/twilio-proxy`); the rest is the package's own. */
export class BrokerRequestClient extends twilio.RequestClient {
  constructor(private readonly compatUrl: string) {
    super();
  }

  override request<T>(opts: RequestOptions<T>) {
    return super.request<T>({ ...opts, uri: opts.uri.replace(/^https:\/\/proxy(\.[a-z0-9-]+)*\.twilio\.com/, this.compatUrl) });
  }
}

interface Operation {
  method: string;
  path: RegExp;
  template: string;
  validators: Map<number, Ajv.ValidateFunction | null>;
}

/** Every operation of twilio_proxy_v1.json with a validator per documented status (null: documented without a body). */
export function proxyOperations(): Operation[] {
  const spec = JSON.parse(readFileSync(TWILIO_PROXY_SPEC, 'utf8')) as {
    paths: Record<string, Record<string, { responses?: Record<string, { content?: Record<string, { schema: unknown }> }> }>>;
    components: unknown;
  };
  const ajv = new Ajv({ nullable: true, unknownFormats: ['uri-map', 'phone-number-capabilities'], allErrors: true });
  ajv.addFormat('phone-number', /^\+[1-9]\d{1,14}$/);
  ajv.addSchema({ components: spec.components }, 'spec');
  const rewrite = (schema: unknown): unknown => JSON.parse(JSON.stringify(schema).replace(/"#\/components\//g, '"spec#/components/'));
  const operations: Operation[] = [];
  for (const [template, item] of Object.entries(spec.paths)) {
    for (const method of ['get', 'post', 'delete']) {
      const operation = item[method];
      if (!operation) continue;
      const validators = new Map<number, Ajv.ValidateFunction | null>();
      for (const [status, response] of Object.entries(operation.responses ?? {})) {
        const schema = response.content?.['application/json']?.schema;
        validators.set(Number(status), schema ? ajv.compile(rewrite(schema) as object) : null);
      }
      operations.push({
        method: method.toUpperCase(),
        template,
        path: new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/]+')}$`),
        validators,
      });
    }
  }
  return operations;
}

/** One answer that was not what twilio_proxy_v1.json says its operation answers. */
export interface SchemaFailure {
  request: string;
  status: number;
  problem: string;
}

/** The guide's client, checking each 2xx answer (and each error's Twilio body) as it comes. */
export class ValidatingRequestClient extends BrokerRequestClient {
  readonly failures: SchemaFailure[] = [];
  /** Every operation answered, as `METHOD template status`. */
  readonly seen: string[] = [];
  private readonly operations = proxyOperations();

  override async request<T>(opts: RequestOptions<T>) {
    const response = await super.request<T>(opts);
    const path = new URL(opts.uri).pathname.replace(/^.*?\/v1\//, '/v1/');
    const label = `${opts.method.toUpperCase()} ${path}`;
    const operation = this.operations.find((o) => o.method === opts.method.toUpperCase() && o.path.test(path));
    if (!operation) {
      this.failures.push({ request: label, status: response.statusCode, problem: 'no such operation in twilio_proxy_v1.json' });
      return response;
    }
    this.seen.push(`${operation.method} ${operation.template} ${response.statusCode}`);
    if (response.statusCode >= 400) {
      const body = response.body as Record<string, unknown>;
      const ok =
        typeof body?.code === 'number' &&
        typeof body.message === 'string' &&
        typeof body.more_info === 'string' &&
        body.status === response.statusCode;
      if (!ok)
        this.failures.push({ request: label, status: response.statusCode, problem: `not a Twilio error body: ${JSON.stringify(body)}` });
      return response;
    }
    if (!operation.validators.has(response.statusCode)) {
      this.failures.push({
        request: label,
        status: response.statusCode,
        problem: `status not documented (${[...operation.validators.keys()].join(', ')})`,
      });
      return response;
    }
    const validate = operation.validators.get(response.statusCode);
    if (validate && !validate(response.body))
      this.failures.push({ request: label, status: response.statusCode, problem: JSON.stringify(validate.errors) });
    return response;
  }
}

export interface PoolNumber {
  id: string;
  provider: string;
  number: string;
  accountId: string | null;
}

/** Dedicates `count` numbers of `provider`'s shared pool to the account, as an operator does (`broker numbers dedicate`). */
export async function dedicateNumbers(brokerUrl: string, accountId: string, provider: string, count: number): Promise<PoolNumber[]> {
  const admin = { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' };
  const listed = (await (await fetch(`${brokerUrl}/v1/admin/numbers`, { headers: admin })).json()) as { numbers: PoolNumber[] };
  const chosen = listed.numbers.filter((n) => n.provider === provider && n.accountId === null).slice(0, count);
  if (chosen.length < count) throw new Error(`only ${chosen.length} shared numbers on ${provider}`);
  for (const n of chosen) {
    const res = await fetch(`${brokerUrl}/v1/admin/numbers/${n.id}/account`, {
      method: 'PUT',
      headers: admin,
      body: JSON.stringify({ accountId }),
    });
    if (!res.ok) throw new Error(`dedicating ${n.number} failed: ${res.status} ${await res.text()}`);
  }
  return chosen.map((n) => ({ ...n, accountId }));
}
