/**
 * The stand-alone insights dashboard's script (`GET /insights`, which inlines it): reads
 * `/api/admin/insights` with an admin token (from the form or a `#token=` link, kept in
 * sessionStorage, sent in the `Authorization` header only), or without one with the browser's
 * login session, and draws the charts Insights in the web UI draws, into the page's sections.
 */
import type { InstanceInsights } from '@flags/schemas';
import { render } from 'preact';
import { ChartFigure, insightsCharts } from './insights-charts.js';
import { html } from './kit.js';

const TOKEN_KEY = 'flags.insights.token';

const byId = <T extends HTMLElement = HTMLElement>(id: string) => document.getElementById(id) as T;
const input = (id: string) => byId<HTMLInputElement>(id);
const day = (date: Date) => date.toISOString().slice(0, 10);

function status(text: string, isError: boolean): void {
  const node = byId('status');
  node.textContent = text;
  node.className = isError ? 'status error' : 'status';
}

// A link may carry the token as #token=: the fragment never leaves the browser (no request
// line, no server or proxy log, no Referer). It moves to sessionStorage and out of the address
// bar and history. Parsed by hand: URLSearchParams would turn a '+' of the token into a space.
const fragment = /(?:^#|&)token=([^&]*)/.exec(location.hash);
if (fragment) {
  let linked = fragment[1] ?? '';
  try {
    linked = decodeURIComponent(linked);
  } catch {
    // Kept as written.
  }
  if (linked) sessionStorage.setItem(TOKEN_KEY, linked);
  history.replaceState(null, '', location.pathname + location.search);
}
const params = new URLSearchParams(location.search);
input('from').value = params.get('from') || day(new Date(Date.now() - 84 * 86_400_000));
input('to').value = params.get('to') || day(new Date());
input('token').value = sessionStorage.getItem(TOKEN_KEY) ?? '';

function draw(data: InstanceInsights): void {
  for (const chart of insightsCharts(data)) {
    byId(`${chart.id}-summary`).textContent = chart.summary;
    render(html`<${ChartFigure} chart=${chart} />`, byId(chart.id).querySelector('.figure')!);
  }
}

async function load(): Promise<void> {
  const token = input('token').value.trim();
  const from = input('from').value;
  const to = input('to').value;
  document.body.dataset.state = 'loading';
  // Without a token, the browser's login session (its cookie) may open the insights.
  if (token) sessionStorage.setItem(TOKEN_KEY, token);
  const query = new URLSearchParams();
  if (from) query.set('from', from);
  if (to) query.set('to', to);
  history.replaceState(null, '', `${location.pathname}?${query}`);
  status('Loading…', false);
  let response: Response;
  try {
    const headers: Record<string, string> = { accept: 'application/json' };
    if (token) headers.authorization = token;
    response = await fetch(`/api/admin/insights?${query}`, {
      headers,
      credentials: 'same-origin',
    });
  } catch (error) {
    document.body.dataset.state = 'error';
    status(`The server could not be reached: ${(error as Error).message}`, true);
    return;
  }
  const body = (await response.json().catch(() => null)) as unknown;
  if (!token && response.status === 401) {
    document.body.dataset.state = 'needs-token';
    status('Log in to flags, or paste an admin API token to load the insights.', false);
    return;
  }
  if (!response.ok) {
    document.body.dataset.state = 'error';
    if (response.status === 401 || response.status === 403) sessionStorage.removeItem(TOKEN_KEY);
    const message = (body as { message?: unknown } | null)?.message;
    status(typeof message === 'string' ? message : `The server answered ${response.status}.`, true);
    return;
  }
  draw(body as InstanceInsights);
  status(`From ${from || '12 weeks ago'} to ${to || 'today'}.`, false);
  document.body.dataset.state = 'ready';
}

byId('controls').addEventListener('submit', (event) => {
  event.preventDefault();
  void load();
});
void load();
