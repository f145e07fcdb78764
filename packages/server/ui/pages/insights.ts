import type { InstanceInsights } from '@flags/schemas';
import { useCallback, useEffect, useState } from 'preact/hooks';
import { get, query } from '../api.js';
import { ChartFigure, insightsCharts } from '../insights-charts.js';
import { html, messageOf, type Navigate, Notice } from '../kit.js';

const day = (date: Date) => date.toISOString().slice(0, 10);

function Charts(props: { data: InstanceInsights }) {
  return html`<div class="charts">
    ${insightsCharts(props.data).map(
      (chart) => html`<section class="card chart" id=${chart.id}
          aria-labelledby=${`${chart.id}-title`}>
        <h2 id=${`${chart.id}-title`}>${chart.title}</h2>
        <p class="muted">${chart.summary}</p>
        <${ChartFigure} chart=${chart} />
      </section>`,
    )}
  </div>`;
}

/**
 * Instance insights (`GET /api/admin/insights`) as the signed-in person: users, flags, project
 * health, flag requests and configuration updates over a range of days kept in the address.
 */
export function InsightsPage(props: { search: string; navigate: Navigate }) {
  const params = new URLSearchParams(props.search);
  const from = params.get('from') ?? day(new Date(Date.now() - 84 * 86_400_000));
  const to = params.get('to') ?? day(new Date());
  const [data, setData] = useState<InstanceInsights>();
  const [error, setError] = useState<string>();
  const load = useCallback(() => {
    get<InstanceInsights>(`/api/admin/insights${query({ from, to })}`).then(
      (answer) => {
        setData(answer);
        setError(undefined);
      },
      (failure: unknown) => setError(messageOf(failure)),
    );
  }, [from, to]);
  useEffect(load, [load]);
  const set = (key: 'from' | 'to') => (event: Event) => {
    const value = (event.currentTarget as HTMLInputElement).value;
    if (value) props.navigate(`/instance-insights${query({ from, to, [key]: value })}`);
  };
  return html`<section aria-labelledby="insights-title">
    <h1 id="insights-title">Insights</h1>
    <form class="filters" aria-label="Range" onSubmit=${(event: Event) => event.preventDefault()}>
      <label>From <input type="date" value=${from} max=${to} onChange=${set('from')} /></label>
      <label>To <input type="date" value=${to} min=${from} onChange=${set('to')} /></label>
    </form>
    <${Notice} error=${error} />
    ${data ? html`<${Charts} data=${data} />` : error ? null : html`<p role="status">Loading…</p>`}
    <p class="muted">For a screen without a login, <a href="/insights" data-external>the insights
      dashboard</a> takes an admin API token.</p>
  </section>`;
}
