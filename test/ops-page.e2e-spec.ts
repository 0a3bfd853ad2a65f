/**
 * The ops page in a real headless Chromium (Debian's, driven by playwright-core): it shows the
 * primary CLOSED, then OPEN a moment after a simulated outage, without a reload, and saves a
 * screenshot to reports/ops-page.png (docs/ops-page.png is a copy of one, made by hand).
 */
import { jest } from '@jest/globals';
import { mkdir } from 'node:fs/promises';
import { chromium, type Browser, type Page } from 'playwright-core';
import { startBroker, type BrokerHarness } from './support/broker-harness';
import { ensureDebianPackage } from './support/debian-package';
import { eventually } from './support/processes';

// Generous bounds for a loaded 2-core CI machine; nothing here asserts a duration.
jest.setTimeout(60_000);

const CHROMIUM = '/usr/bin/chromium';
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
const API_KEY = 'ops-e2e-api-key-0001';

async function text(page: Page, selector: string): Promise<string> {
  return ((await page.locator(selector).first().textContent({ timeout: 2_000 })) ?? '').trim();
}

async function createSession(broker: BrokerHarness, n: number): Promise<number> {
  const res = await fetch(`${broker.url}/v1/sessions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      channel: 'sms',
      participants: [{ number: `+2348031${String(n).padStart(6, '0')}` }, { number: `+2348032${String(n).padStart(6, '0')}` }],
    }),
  });
  return res.status;
}

describe('ops page in headless Chromium', () => {
  let broker: BrokerHarness;
  let browser: Browser;

  beforeAll(async () => {
    ensureDebianPackage(CHROMIUM, 'chromium');
    broker = await startBroker({ BROKER_API_KEY: API_KEY, BREAKER_CONSECUTIVE_FAILURES: '2', PROVIDER_CALL_TIMEOUT_MS: '1000' });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  }, 1_200_000);

  afterAll(async () => {
    await browser?.close();
    await broker?.close();
  });

  it('serves the page and its assets with a same-origin content policy', async () => {
    const page = await fetch(`${broker.url}/ops`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(page.headers.get('content-security-policy')).toContain("connect-src 'self'");
    expect(await page.text()).toContain('<script src="/ops/ops.js" defer></script>');
    expect((await fetch(`${broker.url}/ops/ops.js`)).headers.get('content-type')).toMatch(/^text\/javascript/);
    expect((await fetch(`${broker.url}/ops/ops.css`)).headers.get('content-type')).toMatch(/^text\/css/);
    const missing = await fetch(`${broker.url}/ops/nothing.js`);
    expect(missing.status).toBe(404);
    expect(missing.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  });

  it('shows the primary CLOSED, then OPEN within seconds of an outage, without a reload', async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 1000 } });
    const pageErrors: string[] = [];
    page.on('pageerror', (error) => pageErrors.push(error.message));
    page.on('console', (message) => {
      if (message.type() === 'error') pageErrors.push(message.text());
    });
    try {
      await page.goto(`${broker.url}/ops`);
      await eventually(async () => (await text(page, 'article[data-provider="primary"] [data-field="state"]')) === 'CLOSED', 300);
      expect(await text(page, 'article[data-provider="failover"] [data-field="state"]')).toBe('CLOSED');
      expect(await text(page, '#connection')).toBe('live');
      // A mark on the loaded document: still there at the end means the page never reloaded.
      await page.evaluate("document.body.dataset.loadedOnce = 'yes'");

      const fault = await fetch(`${broker.sim.url}/_sim/providers/primary/faults`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ mode: 'down' }),
      });
      expect(fault.status).toBe(200);
      // Each create fails on the primary and succeeds on the failover within the same request.
      for (let n = 1; n <= 2; n++) expect(await createSession(broker, n)).toBe(201);

      await eventually(async () => (await text(page, 'article[data-provider="primary"] [data-field="state"]')) === 'OPEN', 300);
      const card = page.locator('article[data-provider="primary"]');
      expect(await card.getAttribute('class')).toContain('state-OPEN');
      expect(await text(page, 'article[data-provider="primary"] dd[data-field="Last error"]')).not.toBe('—');
      expect(await text(page, 'article[data-provider="primary"] dd[data-field="Opened at"]')).not.toBe('—');
      expect(await text(page, 'article[data-provider="failover"] [data-field="state"]')).toBe('CLOSED');
      await eventually(async () => (await text(page, '#transitions tbody tr[data-provider="primary"]')).includes('CLOSED → OPEN'), 300);
      expect(await page.locator('#timeline svg circle').count()).toBeGreaterThan(0);
      // The failover carries the two sessions now, by their channels.
      await eventually(
        async () => (await text(page, 'article[data-provider="failover"] dd[data-field="Active sessions"]')) === '2 (sms 2)',
        300,
      );
      // The broker started moments ago: the lanes begin then, not an hour back (the chart's left edge, x = 110 of 1000).
      expect(Number(await page.locator('#timeline svg rect').first().getAttribute('x'))).toBeGreaterThan(800);
      // A number carrying sessions takes more: the pool does not read as exhausted; and what its numbers carry.
      expect(await text(page, 'article[data-provider="failover"] dd[data-field="Pool"]')).toMatch(
        /^10 numbers \(10 enabled\), \d+ carrying sessions; each takes more for other participants; 10 carry voice, 10 sms$/,
      );
      expect(await page.evaluate('document.body.dataset.loadedOnce')).toBe('yes');

      await mkdir('reports', { recursive: true });
      await mkdir('docs', { recursive: true });
      await page.screenshot({ path: 'reports/ops-page.png', fullPage: true });
      expect(pageErrors).toEqual([]);
    } finally {
      await page.close();
    }
  });
});
