/** Drives the CPaaS simulator's control API, as a test or a demo would. */
export type FaultMode = 'ok' | 'down' | 'error' | 'timeout' | 'reject' | 'flaky';

export interface SimCallRecord {
  type: 'bind' | 'unbind' | 'sms' | 'call' | 'health';
  from?: string;
  to?: string;
  text?: string;
  at: string;
  outcome?: string;
  [field: string]: unknown;
}

export async function setFault(
  simUrl: string,
  provider: string,
  fault: { mode: FaultMode; errorRate?: number; latencyMs?: number },
): Promise<void> {
  const res = await fetch(`${simUrl}/_sim/providers/${provider}/faults`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(fault),
  });
  if (!res.ok) throw new Error(`setting ${provider} faults failed: ${res.status} ${await res.text()}`);
}

export async function simCalls(simUrl: string, provider: string, type?: SimCallRecord['type']): Promise<SimCallRecord[]> {
  const res = await fetch(`${simUrl}/_sim/providers/${provider}/calls${type ? `?type=${type}` : ''}`);
  return (await res.json()) as SimCallRecord[];
}

export async function clearSimCalls(simUrl: string, provider: string): Promise<void> {
  await fetch(`${simUrl}/_sim/providers/${provider}/calls`, { method: 'DELETE' });
}

export async function simInbound(
  simUrl: string,
  provider: string,
  body: { channel: 'sms' | 'voice'; from: string; to: string; text?: string },
): Promise<{ status: number; body: unknown; headers: Headers }> {
  const res = await fetch(`${simUrl}/_sim/providers/${provider}/inbound`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    /* not JSON */
  }
  return { status: res.status, body: parsed, headers: res.headers };
}
