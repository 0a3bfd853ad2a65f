/**
 * A broker whose provider keeps no sessions of its own (`keepsSessions` false, Twilio here; docs/design.md):
 * a create is the reservation and the activation, with no request to the vendor. The Twilio adapter is
 * pointed at Prism serving Twilio's published OpenAPI (test/support/prism.ts) through the test suite's
 * recording proxy, so the bench can prove that no create sent a vendor request (`vendorRequests`).
 * Its pool numbers are added through the admin API, as an operator adds a vendor's numbers.
 */
import { TWILIO_API_SPEC, startPrism } from '../../test/support/prism';
import { startFaultProxy } from '../../test/support/fault-proxy';
import { BENCH_ADMIN_TOKEN, startBrokerProcess, type BrokerProcess } from '../support/stack';

export const DIRECT_PROVIDER = 'direct';
const ACCOUNT_SID = 'AC' + 'feedc0de'.repeat(4);
const AUTH_TOKEN = '0a1b2c3d'.repeat(4);

export interface DirectBroker {
  broker: BrokerProcess;
  /** Requests the broker has sent to the vendor so far (health checks included). */
  vendorRequests(): number;
  stop(): Promise<void>;
}

/** Valid Nigerian mobiles (pool numbers are checked as phone numbers of their country). */
function poolNumber(i: number): string {
  return `+234903${String(i + 1).padStart(7, '0')}`;
}

export async function startDirectBroker(
  databaseUrl: string,
  simUrl: string,
  env: Record<string, string>,
  numbers: number,
  nodeArgs: string[] = [],
  /** Another build's entry point (`--against`); `numbers` 0 when another broker added them to this database. */
  main?: string,
): Promise<DirectBroker> {
  const prism = await startPrism(TWILIO_API_SPEC);
  const proxy = await startFaultProxy(prism.url);
  let broker: BrokerProcess | undefined;
  try {
    broker = await startBrokerProcess(
      databaseUrl,
      simUrl,
      {
        ...env,
        PROVIDERS: `${DIRECT_PROVIDER}=twilio:${proxy.url}`,
        PUBLIC_URL: 'https://broker.example.com',
        PROVIDER_DIRECT_ACCOUNT_SID: ACCOUNT_SID,
        PROVIDER_DIRECT_AUTH_TOKEN: AUTH_TOKEN,
      },
      { nodeArgs, main },
    );
    for (let i = 0; i < numbers; i++) {
      const res = await fetch(`${broker.url}/v1/admin/numbers`, {
        method: 'POST',
        headers: { authorization: `Bearer ${BENCH_ADMIN_TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify({ provider: DIRECT_PROVIDER, number: poolNumber(i) }),
      });
      if (res.status !== 201) throw new Error(`adding pool number ${poolNumber(i)}: ${res.status} ${await res.text()}`);
    }
  } catch (error) {
    await broker?.stop();
    await proxy.close();
    await prism.close();
    throw error;
  }
  const running = broker;
  return {
    broker: running,
    vendorRequests: () => proxy.exchanges.length,
    stop: async () => {
      await running.stop();
      await proxy.close();
      await prism.close();
    },
  };
}
