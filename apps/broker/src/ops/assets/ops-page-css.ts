/** The ops page's stylesheet. */
export const OPS_PAGE_CSS = String.raw`:root {
  --bg: #f6f8fa;
  --card: #ffffff;
  --text: #1f2328;
  --muted: #656d76;
  --border: #d0d7de;
  --closed: #1a7f37;
  --half-open: #b7791f;
  --open: #c62828;
  --disabled: #57606a;
  font-family: system-ui, -apple-system, 'Segoe UI', Roboto, 'Noto Sans', 'DejaVu Sans', sans-serif;
  color: var(--text);
  background: var(--bg);
}
* { box-sizing: border-box; }
body { margin: 0; }
.top {
  display: flex;
  justify-content: space-between;
  align-items: center;
  gap: 1rem;
  flex-wrap: wrap;
  padding: 0.8rem 1.5rem;
  background: #24292f;
  color: #ffffff;
}
.top h1 { margin: 0; font-size: 1.2rem; font-weight: 600; }
.subtitle { font-weight: 400; color: #c9d1d9; margin-left: 0.4rem; }
.status { display: flex; gap: 0.8rem; align-items: center; font-size: 0.85rem; color: #c9d1d9; }
.connection { padding: 0.15rem 0.6rem; border-radius: 999px; background: #57606a; color: #ffffff; font-weight: 600; }
.connection[data-state='live'] { background: var(--closed); }
.connection[data-state='reconnecting'] { background: var(--open); }
main { padding: 1rem 1.5rem 2rem; max-width: 1200px; margin: 0 auto; }
section { margin-bottom: 1.6rem; }
.section-title { font-size: 1rem; margin: 0 0 0.6rem; }
.section-title small { font-weight: 400; color: var(--muted); }
.providers { display: grid; grid-template-columns: repeat(auto-fill, minmax(320px, 1fr)); gap: 1rem; }
.provider {
  background: var(--card);
  border: 1px solid var(--border);
  border-left: 6px solid var(--closed);
  border-radius: 6px;
  padding: 0.8rem 1rem;
}
.provider.state-HALF_OPEN { border-left-color: var(--half-open); }
.provider.state-OPEN { border-left-color: var(--open); }
.provider.disabled { opacity: 0.85; border-style: dashed; border-left-style: solid; }
.provider header { display: flex; align-items: center; gap: 0.5rem; margin-bottom: 0.5rem; }
.provider h3 { margin: 0; font-size: 1.1rem; flex: 1; }
.badge { display: inline-block; padding: 0.15rem 0.55rem; border-radius: 4px; font-size: 0.8rem; font-weight: 700; color: #ffffff; letter-spacing: 0.03em; }
.badge.state-CLOSED { background: var(--closed); }
.badge.state-HALF_OPEN { background: var(--half-open); }
.badge.state-OPEN { background: var(--open); }
.badge.disabled-flag { background: var(--disabled); }
.provider dl { display: grid; grid-template-columns: max-content 1fr; gap: 0.25rem 0.8rem; margin: 0; font-size: 0.88rem; }
.provider dt { color: var(--muted); }
.provider dd { margin: 0; overflow-wrap: anywhere; }
.provider dd.error { color: var(--open); font-family: ui-monospace, 'DejaVu Sans Mono', monospace; font-size: 0.82rem; }
.chart { background: var(--card); border: 1px solid var(--border); border-radius: 6px; padding: 0.4rem; }
.chart svg { display: block; width: 100%; height: auto; }
.chart text { font-size: 12px; fill: var(--muted); font-family: inherit; }
.chart text.lane-label { fill: var(--text); font-weight: 600; }
.legend { list-style: none; display: flex; gap: 1rem; padding: 0; margin: 0.4rem 0 0; font-size: 0.82rem; color: var(--muted); }
.legend li { display: flex; align-items: center; gap: 0.35rem; }
.swatch { display: inline-block; width: 0.9rem; height: 0.9rem; border-radius: 2px; }
.swatch.state-CLOSED { background: var(--closed); }
.swatch.state-HALF_OPEN { background: var(--half-open); }
.swatch.state-OPEN { background: var(--open); }
.transitions { width: 100%; border-collapse: collapse; background: var(--card); border: 1px solid var(--border); font-size: 0.85rem; }
.transitions th, .transitions td { text-align: left; padding: 0.35rem 0.6rem; border-bottom: 1px solid var(--border); vertical-align: top; }
.transitions th { background: #eaeef2; font-weight: 600; }
.transitions .empty td { color: var(--muted); }
.to-CLOSED { color: var(--closed); font-weight: 700; }
.to-HALF_OPEN { color: var(--half-open); font-weight: 700; }
.to-OPEN { color: var(--open); font-weight: 700; }
.empty { color: var(--muted); }
footer { text-align: center; color: var(--muted); font-size: 0.8rem; padding: 0 0 1.5rem; }
`;
