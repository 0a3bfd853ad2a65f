/**
 * The answers that are no HTTP answer (a reset connection, silence past the timeout, a refused
 * connection) mean the same for every HTTP adapter: a counted failure whose reason names what
 * happened. Each adapter spec runs these cases for its operations against its vendor stand-in.
 */
import type { CpaasProvider, ProviderOperation, ProviderResult } from '../provider';
import { refusingUrl, type VendorReply, type VendorStandIn } from './vendor-stand-in';

/** The failure a spec expects, or the test fails naming the value it got. */
export function failureOf<T>(result: ProviderResult<T>) {
  if (result.ok) throw new Error(`expected a failure, got ${JSON.stringify(result.value)}`);
  return result.failure;
}

interface TransportCases<T> {
  operation: ProviderOperation;
  standIn: () => VendorStandIn;
  /** A new adapter of the vendor, named `primary`, at `baseUrl`, giving up after `timeoutMs`; the case closes it. */
  adapter: (baseUrl: string, timeoutMs: number) => CpaasProvider;
  call: (provider: CpaasProvider) => Promise<ProviderResult<T>>;
  /** The vendor's success answer to `call`. */
  success: VendorReply;
}

const TIMEOUT_MS = 150;

export function itCountsTransportFailures<T>(cases: TransportCases<T>): void {
  const { operation, call } = cases;
  const using = async <R>(baseUrl: string, timeoutMs: number, run: (provider: CpaasProvider) => Promise<R>): Promise<R> => {
    const provider = cases.adapter(baseUrl, timeoutMs);
    try {
      return await run(provider);
    } finally {
      await provider.close();
    }
  };

  it(`counts a connection reset before the answer on ${operation} as a transport failure, and the next call goes through`, async () => {
    const vendor = cases.standIn();
    vendor.reply({ kind: 'reset' }, cases.success);
    const [failed, next] = await using(vendor.url, 2_000, async (provider) => [failureOf(await call(provider)), await call(provider)]);
    expect(failed).toMatchObject({ countsAgainstProvider: true, cause: 'transport' });
    expect(failed.status).toBeUndefined();
    expect(failed.reason).toMatch(
      new RegExp(`^primary: connection (reset|dropped by the provider) \\((ECONNRESET|UND_ERR_SOCKET)\\) on ${operation}$`),
    );
    expect(next.ok).toBe(true);
  });

  it(`counts no answer within the timeout on ${operation}`, async () => {
    const vendor = cases.standIn();
    vendor.reply({ kind: 'silent' });
    const failed = await using(vendor.url, TIMEOUT_MS, async (provider) => failureOf(await call(provider)));
    expect(failed).toEqual({
      countsAgainstProvider: true,
      cause: 'timeout',
      reason: `primary: no answer within ${TIMEOUT_MS} ms on ${operation}`,
    });
  });

  it(`counts a refused connection on ${operation} as a transport failure`, async () => {
    const failed = await using(await refusingUrl(), 2_000, async (provider) => failureOf(await call(provider)));
    expect(failed).toEqual({
      countsAgainstProvider: true,
      cause: 'transport',
      reason: `primary: connection refused (ECONNREFUSED) on ${operation}`,
    });
  });
}
