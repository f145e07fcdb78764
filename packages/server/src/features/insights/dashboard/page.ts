import { createHash } from 'node:crypto';

const style = `
  :root { color-scheme: light; --ink: #111827; --muted: #5b6472; --line: #e5e7eb; --card: #fff; }
  * { box-sizing: border-box; }
  body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif;
         color: var(--ink); background: #f3f4f6; }
  header { display: flex; flex-wrap: wrap; align-items: center; gap: 12px 24px; padding: 14px 24px;
           background: #111827; color: #fff; }
  header h1 { margin: 0; font-size: 18px; font-weight: 600; }
  form { display: flex; flex-wrap: wrap; gap: 8px 12px; align-items: end; }
  label { display: grid; gap: 2px; font-size: 12px; color: #d1d5db; }
  input { font: inherit; padding: 5px 8px; border: 1px solid #374151; border-radius: 6px;
          background: #1f2937; color: #fff; }
  button { font: inherit; padding: 6px 14px; border: 0; border-radius: 6px; background: #2563eb;
           color: #fff; cursor: pointer; }
  .status { padding: 8px 24px; color: var(--muted); }
  .status.error { color: #b91c1c; font-weight: 600; }
  main { display: grid; grid-template-columns: repeat(auto-fill, minmax(520px, 1fr)); gap: 16px;
         padding: 0 24px 24px; }
  section { background: var(--card); border: 1px solid var(--line); border-radius: 10px; padding: 14px 16px; }
  section h2 { margin: 0; font-size: 15px; }
  section p { margin: 2px 0 8px; color: var(--muted); font-size: 13px; min-height: 1.45em; }
  .figure > svg { width: 100%; height: auto; display: block; }
  svg text { font-size: 11px; fill: var(--muted); }
  svg .grid line { stroke: var(--line); }
  svg .empty { font-size: 14px; }
  svg circle.point { stroke: #fff; stroke-width: 1.5; }
  svg rect.bar { stroke: none; }
  .legend { display: flex; flex-wrap: wrap; gap: 4px 14px; list-style: none; padding: 0;
            margin: 4px 0 0; font-size: 12px; color: var(--muted); }
  .legend li { display: inline-flex; align-items: center; gap: 5px; }
`;

const sha256 = (text: string) => createHash('sha256').update(text).digest('base64');

/** A chart's place: its script (`insights-charts.ts` of the web UI) draws into `.figure`. */
const chart = (series: string, id: string, title: string) => `
    <section id="${id}" data-series="${series}" aria-labelledby="${id}-title">
      <h2 id="${id}-title">${title}</h2>
      <p id="${id}-summary"></p>
      <div class="figure"></div>
    </section>`;

/** The dashboard page and the CSP that lets its own script and style run, and nothing else. */
export interface DashboardPage {
  readonly html: string;
  readonly csp: string;
}

/**
 * The page around `script` (the web UI's `dashboard.js` bundle), built once: it holds no data
 * and no token, so every visitor gets the same bytes.
 */
export function dashboardPage(script: string): DashboardPage {
  const html = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>flags · Insights</title>
  <style>${style}</style>
</head>
<body data-state="loading">
  <header>
    <h1>flags · Insights</h1>
    <form id="controls">
      <label>Admin token <input id="token" type="password" autocomplete="off" size="28"></label>
      <label>From <input id="from" type="date"></label>
      <label>To <input id="to" type="date"></label>
      <button type="submit">Show</button>
    </form>
  </header>
  <div id="status" class="status" role="status">Loading…</div>
  <main>${chart('userTrends', 'users', 'Users')}${chart('flagTrends', 'flags', 'Flags')}${chart(
    'projectFlagTrends',
    'health',
    'Project health by week',
  )}${chart('metricsSummaryTrends', 'requests', 'Flag requests by week and project')}${chart(
    'environmentTypeTrends',
    'updates',
    'Configuration updates by week and environment type',
  )}
  </main>
  <script type="module">${script}</script>
</body>
</html>
`;
  // Only this page's own script and style may run; the API is same-origin.
  const csp = [
    "default-src 'none'",
    `script-src 'sha256-${sha256(script)}'`,
    `style-src 'sha256-${sha256(style)}'`,
    "connect-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
  return { html, csp };
}
