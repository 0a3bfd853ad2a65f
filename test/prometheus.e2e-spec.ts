/**
 * deploy/ against the real things (Debian's `prometheus` package, which has `promtool`): the alert rules'
 * unit tests (`promtool test rules deploy/prometheus/*.test.yml`), then a real Prometheus scraping a real
 * broker with those rules loaded, every rule evaluating without an error, and every query of every panel of
 * deploy/grafana/session-broker.json (and its provider variable) answering data, no error.
 */
import { jest } from '@jest/globals';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WebhookReceiver } from '@app/testing';
import request from 'supertest';
import { API_KEY, AUTH_ENV, createSession, freshPair, sessionBody } from './support/api-client';
import { startBroker, type BrokerHarness } from './support/broker-harness';
import { ensureDebianPackage } from './support/debian-package';
import { eventually, freePort } from './support/processes';
import { simInbound } from './support/sim-control';

jest.setTimeout(180_000);

const ROOT = process.cwd();
const PROMETHEUS = '/usr/bin/prometheus';
const PROMTOOL = '/usr/bin/promtool';

interface Panel {
  type: string;
  title: string;
  targets?: Array<{ expr: string }>;
}

interface Dashboard {
  panels: Panel[];
  templating: { list: Array<{ name: string; type: string; query?: { query: string } }> };
}

/** What Grafana puts in place of its variables: every provider, and a rate window the 1 s scrapes fill. */
function asGrafanaSends(expr: string): string {
  return expr.replaceAll('$__rate_interval', '1m').replaceAll('$provider', '.*');
}

describe('the alert rules', () => {
  beforeAll(() => ensureDebianPackage(PROMTOOL, 'prometheus'), 1_200_000);

  it('load, and pass their unit tests (promtool test rules deploy/prometheus/*.test.yml)', async () => {
    const dir = join(ROOT, 'deploy/prometheus');
    const tests = (await readdir(dir)).filter((name) => name.endsWith('.test.yml')).map((name) => join(dir, name));
    expect(tests.length).toBeGreaterThan(0);
    for (const args of [
      ['check', 'rules', join(dir, 'alerts.yml')],
      ['test', 'rules', ...tests],
    ]) {
      const run = spawnSync(PROMTOOL, args, { encoding: 'utf8', timeout: 120_000 });
      expect({ args, status: run.status, output: `${run.stdout}${run.stderr}` }).toMatchObject({ status: 0 });
    }
  });
});

describe('a real Prometheus scraping a real broker', () => {
  let broker: BrokerHarness;
  let receiver: WebhookReceiver;
  let prometheus: ChildProcess;
  let exited: Promise<void>;
  let dir: string;
  let promUrl: string;
  let traffic: NodeJS.Timeout;

  const query = async (
    expr: string,
  ): Promise<{ status: string; error?: string; data?: { result: Array<{ value: [number, string] }> } }> => {
    const res = await fetch(`${promUrl}/api/v1/query?query=${encodeURIComponent(expr)}`);
    return (await res.json()) as { status: string; error?: string; data?: { result: Array<{ value: [number, string] }> } };
  };

  beforeAll(async () => {
    ensureDebianPackage(PROMETHEUS, 'prometheus');
    receiver = await WebhookReceiver.start();
    broker = await startBroker({ ...AUTH_ENV, WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', METRICS_REFRESH_MS: '1000' });

    // What a broker in use has done: sessions on both channels, a webhook delivered, a text relayed.
    const session = (await createSession(broker.url, sessionBody(freshPair(), { callbackUrl: receiver.url })).expect(201)).body as {
      id: string;
      provider: string;
      proxyNumber: string;
      participants: Array<{ number: string }>;
    };
    await createSession(broker.url, sessionBody(freshPair(), { channel: 'voice' })).expect(201);
    await simInbound(broker.sim.url, session.provider, {
      channel: 'sms',
      from: session.participants[0].number,
      to: session.proxyNumber,
      text: 'hi',
    });
    await receiver.waitFor(1);
    // ... and keeps doing while Prometheus watches, so every rate has something in its window.
    traffic = setInterval(() => {
      void request(broker.url)
        .get(`/v1/sessions/${session.id}`)
        .set('authorization', `Bearer ${API_KEY}`)
        .then(
          () => undefined,
          () => undefined,
        );
      void createSession(broker.url, sessionBody(freshPair())).then(
        () => undefined,
        () => undefined,
      );
    }, 250);

    dir = await mkdtemp(join(tmpdir(), 'prometheus-e2e-'));
    const port = await freePort();
    promUrl = `http://127.0.0.1:${port}`;
    const config = [
      'global:',
      '  scrape_interval: 1s',
      '  evaluation_interval: 1s',
      'rule_files:',
      `  - ${join(ROOT, 'deploy/prometheus/alerts.yml')}`,
      'scrape_configs:',
      '  - job_name: session-broker',
      '    static_configs:',
      `      - targets: ['${new URL(broker.url).host}']`,
      '',
    ].join('\n');
    await writeFile(join(dir, 'prometheus.yml'), config);
    prometheus = spawn(
      PROMETHEUS,
      [
        `--config.file=${join(dir, 'prometheus.yml')}`,
        `--storage.tsdb.path=${join(dir, 'data')}`,
        `--web.listen-address=127.0.0.1:${port}`,
      ],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    let log = '';
    prometheus.stderr!.on('data', (chunk: Buffer) => (log = (log + chunk.toString()).slice(-4_000)));
    exited = new Promise((done) => prometheus.once('exit', () => done()));
    await eventually(async () => (await fetch(`${promUrl}/-/ready`)).ok, 300).catch(() => {
      throw new Error(`Prometheus did not become ready:\n${log}`);
    });
    // Enough scrapes for a rate over any window: five in the last minute.
    await eventually(async () => {
      const answer = await query('count_over_time(up{job="session-broker"}[1m])');
      return Number(answer.data?.result[0]?.value[1] ?? 0) >= 5;
    }, 300);
  }, 1_200_000);

  afterAll(async () => {
    clearInterval(traffic);
    if (prometheus && prometheus.exitCode === null) {
      prometheus.kill('SIGTERM');
      await exited;
    }
    await receiver?.close();
    await broker?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('scrapes the broker', async () => {
    const up = await query('up{job="session-broker"}');
    expect(up.data?.result.map((r) => r.value[1])).toEqual(['1']);
  });

  it('evaluates every alert rule against the live series without an error', async () => {
    const rules = async () => {
      const res = (await (await fetch(`${promUrl}/api/v1/rules`)).json()) as {
        data: { groups: Array<{ rules: Array<{ name: string; health: string; lastError?: string; lastEvaluation: string }> }> };
      };
      return res.data.groups.flatMap((group) => group.rules);
    };
    await eventually(async () => (await rules()).every((rule) => !rule.lastEvaluation.startsWith('0001')));
    const loaded = await rules();
    expect(loaded.length).toBe(9);
    expect(loaded.filter((rule) => rule.health !== 'ok').map((rule) => `${rule.name}: ${rule.lastError}`)).toEqual([]);
  });

  it('answers every query of every dashboard panel with data and no error, and lists the providers for its variable', async () => {
    const dashboard = JSON.parse(await readFile(join(ROOT, 'deploy/grafana/session-broker.json'), 'utf8')) as Dashboard;
    const queries = dashboard.panels.flatMap((panel) => (panel.targets ?? []).map((target) => ({ panel: panel.title, expr: target.expr })));
    expect(queries.length).toBeGreaterThanOrEqual(dashboard.panels.filter((panel) => panel.type !== 'row').length);

    // A histogram's quantile needs requests in its window: the traffic above keeps them coming, so retry a little.
    const failing: string[] = [];
    for (const { panel, expr } of queries) {
      let problem = '';
      await eventually(
        async () => {
          const answer = await query(asGrafanaSends(expr));
          const values = (answer.data?.result ?? []).map((r) => Number(r.value[1]));
          problem =
            answer.status !== 'success'
              ? `error ${answer.error}`
              : values.length === 0
                ? 'no data'
                : values.every((v) => Number.isNaN(v))
                  ? 'only NaN'
                  : '';
          return problem === '';
        },
        20,
        500,
      ).catch(() => failing.push(`${panel}: ${expr}: ${problem}`));
    }
    expect(failing).toEqual([]);

    const variable = dashboard.templating.list.find((v) => v.name === 'provider')!;
    const metric = /^label_values\((\w+), provider\)$/.exec(variable.query!.query)![1];
    const values = (await (await fetch(`${promUrl}/api/v1/label/provider/values?match[]=${metric}`)).json()) as { data: string[] };
    expect(values.data.sort()).toEqual(['failover', 'primary']);
  });
});
