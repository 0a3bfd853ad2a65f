/**
 * The SDK's types cannot lag the server: the OpenAPI document the running broker serves (/docs/openapi.json)
 * is read schema by schema, and each schema the SDK mirrors must have the same properties as its SDK type,
 * and each enum (a status, a state, a channel, an event type) the same values, read from the SDK's
 * declarations by the TypeScript compiler. A schema the document gains must be given an SDK type here, or
 * be named as one the SDK does not mirror (the admin API's, which the CLI reads).
 */
import { rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import ts from 'typescript';
import { CALL_ANSWERS } from '@app/cpaas';
import { startBroker, type BrokerHarness } from './support/broker-harness';

const ROOT = process.cwd();

/** Each schema of the document and the SDK type that mirrors it. */
const SDK_TYPE_OF: Record<string, string> = {
  SessionDto: 'Session',
  SessionParticipantDto: 'Participant',
  ParticipantDto: 'Participant',
  CreateSessionDto: 'CreateSessionInput',
  SessionListDto: 'SessionPage',
  InteractionDto: 'Interaction',
  ProviderHealthDto: 'ProviderHealth',
  CpaasHealthDto: 'CpaasHealth',
  BreakerTransitionDto: 'BreakerTransition',
  CallbackUrlDto: 'AccountCallbackUrl',
  WebhookSecretStatusDto: 'WebhookSecretStatus',
  RevealedWebhookSecretDto: 'RevealedWebhookSecret',
  RotatedWebhookSecretDto: 'RotatedWebhookSecret',
  EventDto: 'BrokerEvent',
  EventListDto: 'EventPage',
  DeliverySummaryDto: 'DeliverySummary',
  DeliveryDto: 'Delivery',
  AttemptDto: 'DeliveryAttempt',
  EndpointStateDto: 'DeliveryEndpointState',
  DefaultCountryDto: 'AccountDefaultCountry',
  InterceptUrlDto: 'AccountInterceptUrl',
  SendMessageDto: 'SendMessageInput',
  SessionNumberDto: 'SessionNumber',
  RescueSettingsDto: 'AccountRescue',
  SetRescueDto: 'SetRescueInput',
};

/** Schemas the SDK does not mirror, and why. */
const NOT_THE_SDKS: Record<string, string> = {
  InteractionListDto: 'listInteractions() answers its array',
  SetCallbackUrlDto: 'setCallbackUrl() takes the URL itself',
  SetDefaultCountryDto: 'setDefaultCountry() takes the country itself',
  SetInterceptUrlDto: 'setInterceptUrl() takes the URL itself',
  BreakerHistoryDto: 'the history is the ops page and the CLI',
  DisableProviderDto: 'admin API (CLI)',
  NumberImportDto: 'admin API (CLI)',
  NumberImportFailureDto: 'admin API (CLI)',
  CreateAccountDto: 'admin API (CLI)',
  CreateApiKeyDto: 'admin API (CLI)',
  ApiKeyDto: 'admin API (CLI)',
  CreatedApiKeyDto: 'admin API (CLI)',
  AccountDto: 'admin API (CLI)',
  AccountDestinationsDto: 'admin API (CLI)',
  FirstWebhookSecretDto: 'admin API (CLI)',
  CreatedAccountDto: 'admin API (CLI)',
  AccountListDto: 'admin API (CLI)',
  AddProxyNumberDto: 'admin API (CLI)',
  DedicateProxyNumberDto: 'admin API (CLI)',
  ProxyNumberDto: 'admin API (CLI)',
  ProxyNumberListDto: 'admin API (CLI)',
};

interface Schema {
  $ref?: string;
  enum?: unknown[];
  items?: Schema;
  allOf?: Schema[];
  oneOf?: Schema[];
  properties?: Record<string, Schema>;
}

/** The enum values a property takes, following `$ref`, `allOf` and arrays; undefined when it has none. */
function enumOf(schema: Schema, schemas: Record<string, Schema>): string[] | undefined {
  if (schema.enum) return schema.enum.map(String).sort();
  if (schema.$ref) return enumOf(schemas[schema.$ref.split('/').pop()!], schemas);
  if (schema.items) return enumOf(schema.items, schemas);
  for (const part of [...(schema.allOf ?? []), ...(schema.oneOf ?? [])]) {
    const found = enumOf(part, schemas);
    if (found) return found;
  }
  return undefined;
}

/** The SDK as a user's compiler sees it: each named type's properties, and the string literals each one takes. */
function sdkTypes(names: string[]): Map<string, Map<string, string[] | undefined>> {
  const probe = join(tmpdir(), `sdk-openapi-${process.pid}.ts`);
  const index = join(ROOT, 'libs/sdk/src/index').replaceAll('\\', '/');
  writeFileSync(
    probe,
    `import type * as sdk from '${index}';\nexport interface Probe {\n${names.map((n) => `  ${n}: sdk.${n};`).join('\n')}\n}\n`,
  );
  try {
    // Only what the types need: the SDK's own files and the ES library (no DOM or Node typings to read).
    const program = ts.createProgram([probe], {
      strict: true,
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.CommonJS,
      lib: ['lib.es2022.d.ts'],
      types: [],
      skipLibCheck: true,
      noEmit: true,
    });
    const diagnostics = program.getSemanticDiagnostics(program.getSourceFile(probe));
    if (diagnostics.length > 0) throw new Error(ts.flattenDiagnosticMessageText(diagnostics[0].messageText, '\n'));
    const checker = program.getTypeChecker();
    const file = program.getSourceFile(probe)!;
    const probeType = checker.getTypeAtLocation((file.statements.find(ts.isInterfaceDeclaration) as ts.InterfaceDeclaration).name);
    const result = new Map<string, Map<string, string[] | undefined>>();
    for (const member of checker.getPropertiesOfType(probeType)) {
      const type = checker.getTypeOfSymbol(member);
      const properties = new Map<string, string[] | undefined>();
      for (const property of checker.getPropertiesOfType(type)) {
        const propertyType = checker.getNonNullableType(checker.getTypeOfSymbol(property));
        const element = checker.isArrayType(propertyType) ? checker.getTypeArguments(propertyType as ts.TypeReference)[0] : propertyType;
        const parts = element.isUnion() ? element.types : [element];
        const literals = parts.every((t) => t.isStringLiteral()) ? parts.map((t) => (t as ts.StringLiteralType).value).sort() : undefined;
        properties.set(property.name, literals);
      }
      result.set(member.name, properties);
    }
    return result;
  } finally {
    rmSync(probe, { force: true });
  }
}

describe('the SDK types against the OpenAPI document the broker serves', () => {
  let broker: BrokerHarness;
  let schemas: Record<string, Schema>;

  beforeAll(async () => {
    broker = await startBroker();
    const document = (await request(broker.url).get('/docs/openapi.json').expect(200)).body as {
      components: { schemas: Record<string, Schema> };
    };
    schemas = document.components.schemas;
  });
  afterAll(async () => {
    await broker?.close();
  });

  it('gives every schema of the document an SDK type, or says why the SDK has none', () => {
    const enumsOnly = (schema: Schema) => schema.enum !== undefined && schema.properties === undefined;
    const unclassified = Object.keys(schemas).filter(
      (name) => !(name in SDK_TYPE_OF) && !(name in NOT_THE_SDKS) && !enumsOnly(schemas[name]),
    );
    expect(unclassified).toEqual([]);
  });

  it('has, for each, the same properties and the same values for each enum', () => {
    const types = sdkTypes([...new Set(Object.values(SDK_TYPE_OF))]);
    const differences: string[] = [];
    for (const [schemaName, typeName] of Object.entries(SDK_TYPE_OF)) {
      const schema = schemas[schemaName];
      if (!schema) {
        differences.push(`${schemaName}: not in the document any more (${typeName})`);
        continue;
      }
      const sdk = types.get(typeName)!;
      const served = Object.entries(schema.properties ?? {});
      for (const [property, definition] of served) {
        if (!sdk.has(property)) {
          differences.push(`${typeName}.${property}: served in ${schemaName}, missing from the SDK`);
          continue;
        }
        const values = enumOf(definition, schemas);
        const sdkValues = sdk.get(property);
        if (values && JSON.stringify(values) !== JSON.stringify(sdkValues))
          differences.push(
            `${typeName}.${property}: the server sends ${values.join(' | ')}; the SDK has ${sdkValues?.join(' | ') ?? 'no enum'}`,
          );
      }
      for (const property of sdk.keys())
        if (!served.some(([name]) => name === property))
          differences.push(`${typeName}.${property}: in the SDK, not served in ${schemaName}`);
    }
    expect(differences).toEqual([]);
  });

  it('and, beyond the document, has every answer a call.completed webhook carries', () => {
    // The adapters' answers, and `failed` for a bridge the provider could not set up (relay.service.ts).
    const served = [...CALL_ANSWERS, 'failed'].sort();
    expect(sdkTypes(['CallCompletedData']).get('CallCompletedData')!.get('answer')).toEqual(served);
  });
});
