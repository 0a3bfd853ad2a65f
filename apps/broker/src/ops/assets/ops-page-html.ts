/** The ops page's markup; it loads /ops/ops.css and /ops/ops.js, and nothing from elsewhere. */
export const OPS_PAGE_HTML = String.raw`<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>Session Broker · Ops</title>
    <link rel="icon" href="data:," />
    <link rel="stylesheet" href="/ops/ops.css" />
    <script src="/ops/ops.js" defer></script>
  </head>
  <body>
    <header class="top">
      <h1>Session Broker <span class="subtitle">CPaaS providers</span></h1>
      <div class="status">
        <span id="connection" class="connection" data-state="connecting">connecting…</span>
        <span id="updated" class="updated"></span>
      </div>
    </header>
    <main>
      <section aria-labelledby="providers-title">
        <h2 id="providers-title" class="section-title">Providers</h2>
        <div id="providers" class="providers"><p class="empty">Waiting for the broker…</p></div>
      </section>
      <section aria-labelledby="timeline-title">
        <h2 id="timeline-title" class="section-title">Breaker state, last hour</h2>
        <div id="timeline" class="chart" role="img" aria-label="Breaker state of each provider over the last hour"></div>
        <ul class="legend">
          <li><span class="swatch state-CLOSED"></span>CLOSED</li>
          <li><span class="swatch state-HALF_OPEN"></span>HALF_OPEN</li>
          <li><span class="swatch state-OPEN"></span>OPEN</li>
        </ul>
      </section>
      <section aria-labelledby="rate-title">
        <h2 id="rate-title" class="section-title">Window error rate <small>(since this page opened, every 2 s)</small></h2>
        <div id="error-rate" class="chart" role="img" aria-label="Error rate of each provider over time"></div>
        <ul id="rate-legend" class="legend"></ul>
      </section>
      <section aria-labelledby="transitions-title">
        <h2 id="transitions-title" class="section-title">Transitions, last hour</h2>
        <table id="transitions" class="transitions">
          <thead>
            <tr><th>At</th><th>Provider</th><th>From → to</th><th>Reason</th><th>Last error</th></tr>
          </thead>
          <tbody><tr class="empty"><td colspan="5">None in the last hour.</td></tr></tbody>
        </table>
      </section>
    </main>
    <footer>Live from <code>/v1/health/cpaas/stream</code>; history from <code>/v1/health/cpaas/history</code>.</footer>
  </body>
</html>
`;
