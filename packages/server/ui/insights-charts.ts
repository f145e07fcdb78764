/**
 * The charts of `GET /api/admin/insights`, drawn as SVG: one source for both pages that show
 * them, Insights in the web UI (pages/insights.ts) and the stand-alone dashboard at `/insights`
 * (dashboard.ts). Each mark's title gives its number.
 */
import type { InstanceInsights } from '@flags/schemas';
import { html } from './kit.js';

/** One line or bar series, aligned with the chart's labels (`null`: no value that day/week). */
export interface Series {
  readonly name: string;
  readonly values: readonly (number | null)[];
}

/** One chart: what it shows and how. */
export interface InsightsChart {
  /** Its element id (`users`), which the dashboard's page also has. */
  readonly id: string;
  /** The field of the insights it draws (`userTrends`). */
  readonly field: keyof InstanceInsights;
  readonly title: string;
  /** One line on the latest numbers. */
  readonly summary: string;
  readonly kind: 'line' | 'stacked' | 'grouped';
  readonly labels: readonly string[];
  readonly series: readonly Series[];
  /** After each value in a mark's title (` users`, `%`). */
  readonly unit: string;
  /** A label as the axis shows it. */
  readonly short: (label: string) => string;
  /** The top of the value axis, when fixed (percentages). */
  readonly max?: number;
  readonly colors?: readonly string[];
}

const PALETTE = ['#2563eb', '#16a34a', '#dc2626', '#d97706', '#7c3aed', '#0891b2', '#db2777'];
const WIDTH = 560;
const HEIGHT = 240;
const MARGIN = { top: 14, right: 12, bottom: 34, left: 48 };
const compact = new Intl.NumberFormat('en', { notation: 'compact', maximumFractionDigits: 1 });

/** A top of the value axis: four steps of 1, 2 or 5 × 10ⁿ (at least 1: the series are counts). */
function niceMax(value: number): number {
  const raw = Math.max(value / 4, 1);
  const power = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].find((candidate) => candidate * power >= raw) ?? 10;
  return 4 * step * power;
}

/** The chart's SVG (a line, stacked-bar or grouped-bar chart) and its legend. */
export function ChartFigure(props: { chart: InsightsChart }) {
  const { labels, series, kind, unit } = props.chart;
  const color = (index: number) => props.chart.colors?.[index] ?? PALETTE[index % PALETTE.length]!;
  const plotWidth = WIDTH - MARGIN.left - MARGIN.right;
  const plotHeight = HEIGHT - MARGIN.top - MARGIN.bottom;
  const top = Math.max(
    0,
    ...labels.map((_, at) =>
      kind === 'stacked'
        ? series.reduce((sum, line) => sum + (line.values[at] ?? 0), 0)
        : Math.max(0, ...series.map((line) => line.values[at] ?? 0)),
    ),
  );
  const max = props.chart.max ?? niceMax(top);
  const y = (value: number) => MARGIN.top + plotHeight - (value / max) * plotHeight;
  const band = labels.length === 0 ? plotWidth : plotWidth / labels.length;
  const x = (at: number) => MARGIN.left + band * (at + 0.5);
  const every = Math.ceil(labels.length / 8);
  const mark = (label: string, line: Series, value: number) =>
    html`<title>${label} · ${line.name}: ${value}${unit}</title>`;

  let marks: unknown;
  if (labels.length === 0 || series.length === 0) {
    marks = html`<text x=${WIDTH / 2} y=${HEIGHT / 2} text-anchor="middle" class="empty">No data in this range</text>`;
  } else if (kind === 'line') {
    marks = series.map((line, index) => {
      let path = '';
      let gap = true;
      line.values.forEach((value, at) => {
        if (value === null) {
          gap = true;
          return;
        }
        path += `${gap ? 'M' : 'L'}${x(at).toFixed(1)},${y(value).toFixed(1)}`;
        gap = false;
      });
      return html`<g data-name=${line.name} fill=${color(index)} stroke=${color(index)}>
        <path d=${path} fill="none" stroke-width="2" />
        ${line.values.map((value, at) =>
          value === null
            ? null
            : html`<circle class="point" cx=${x(at).toFixed(1)} cy=${y(value).toFixed(1)} r="3.5">
                ${mark(labels[at]!, line, value)}</circle>`,
        )}
      </g>`;
    });
  } else {
    const width = band * 0.72;
    marks = series.map((line, index) => {
      const bars = line.values.map((value, at) => {
        if (value === null) return null;
        const below =
          kind === 'stacked'
            ? series.slice(0, index).reduce((sum, other) => sum + (other.values[at] ?? 0), 0)
            : 0;
        const barWidth = kind === 'stacked' ? width : width / series.length;
        const left = x(at) - width / 2 + (kind === 'stacked' ? 0 : index * barWidth);
        const barTop = y(below + value);
        return html`<rect class="bar" x=${left.toFixed(1)} y=${barTop.toFixed(1)}
          width=${Math.max(1, barWidth - 1).toFixed(1)}
          height=${Math.max(0, y(below) - barTop).toFixed(1)}>${mark(labels[at]!, line, value)}</rect>`;
      });
      return html`<g data-name=${line.name} fill=${color(index)}>${bars}</g>`;
    });
  }
  const { title, summary } = props.chart;
  return html`<svg viewBox=${`0 0 ${WIDTH} ${HEIGHT}`} role="img" aria-label=${`${title}: ${summary}`}>
      <g class="grid">
        ${[0, 1, 2, 3, 4].map((step) => {
          const value = (max * step) / 4;
          return html`<line x1=${MARGIN.left} x2=${WIDTH - MARGIN.right} y1=${y(value)} y2=${y(value)} />
            <text x=${MARGIN.left - 6} y=${y(value) + 4} text-anchor="end">${compact.format(value)}</text>`;
        })}
      </g>
      <g class="axis">
        ${labels.map((label, at) =>
          at % every === 0
            ? html`<text x=${x(at)} y=${HEIGHT - MARGIN.bottom + 16} text-anchor="middle">${props.chart.short(label)}</text>`
            : null,
        )}
      </g>
      ${marks}
    </svg>
    <ul class="legend">
      ${series.map(
        (line, index) => html`<li>
          <svg width="10" height="10" aria-hidden="true"><rect width="10" height="10" rx="2" fill=${color(index)} /></svg>
          ${line.name}</li>`,
      )}
    </ul>`;
}

const sortedUnique = (values: readonly string[]) => [...new Set(values)].sort();

/** `rows` as one series per `key` value, aligned with `weeks`. */
function pivot<T extends { week: string }>(
  rows: readonly T[],
  key: (row: T) => string,
  value: (row: T) => number,
  weeks: readonly string[],
): Series[] {
  return sortedUnique(rows.map(key)).map((name) => ({
    name,
    values: weeks.map((week) => {
      const row = rows.find((entry) => entry.week === week && key(entry) === name);
      return row ? value(row) : null;
    }),
  }));
}

const shortDay = (label: string) => label.slice(5);
const shortWeek = (label: string) => `W${label.slice(5)}`;
const last = <T>(list: readonly T[]) => list[list.length - 1];

/**
 * The five charts of `data`: users, flags, project health, flag requests and configuration
 * updates, in the order both pages show them.
 */
export function insightsCharts(data: InstanceInsights): InsightsChart[] {
  const { userTrends, flagTrends, projectFlagTrends, metricsSummaryTrends, environmentTypeTrends } =
    data;
  const healthWeeks = sortedUnique(projectFlagTrends.map((row) => row.week));
  const metricWeeks = sortedUnique(metricsSummaryTrends.map((row) => row.week));
  const updateWeeks = sortedUnique(environmentTypeTrends.map((row) => row.week));
  const latestUsers = last(userTrends);
  const latestFlags = last(flagTrends);
  const lastWeek = last(healthWeeks);
  const toProduction = projectFlagTrends
    .filter((row) => row.week === lastWeek && row.timeToProduction !== undefined)
    .map((row) => `${row.project} ${row.timeToProduction} d`);
  const requests = metricsSummaryTrends.reduce((sum, row) => sum + row.totalRequests, 0);
  const updates = environmentTypeTrends.reduce((sum, row) => sum + row.totalUpdates, 0);
  return [
    {
      id: 'users',
      field: 'userTrends',
      title: 'Users',
      summary: `${latestUsers?.total ?? 0} users, ${latestUsers?.active ?? 0} active in the last 60 days`,
      kind: 'line',
      labels: userTrends.map((row) => row.date.slice(0, 10)),
      series: (['total', 'active', 'inactive'] as const).map((field) => ({
        name: field,
        values: userTrends.map((row) => row[field]),
      })),
      unit: ' users',
      short: shortDay,
      colors: ['#2563eb', '#16a34a', '#6b7280'],
    },
    {
      id: 'flags',
      field: 'flagTrends',
      title: 'Flags',
      summary: `${latestFlags?.total ?? 0} flags, ${latestFlags?.stale ?? 0} stale, ${latestFlags?.potentiallyStale ?? 0} potentially stale`,
      kind: 'stacked',
      labels: flagTrends.map((row) => row.date.slice(0, 10)),
      series: (['active', 'stale', 'potentiallyStale'] as const).map((field) => ({
        name: field,
        values: flagTrends.map((row) => row[field]),
      })),
      unit: ' flags',
      short: shortDay,
      colors: ['#16a34a', '#dc2626', '#d97706'],
    },
    {
      id: 'health',
      field: 'projectFlagTrends',
      title: 'Project health by week',
      summary:
        toProduction.length > 0
          ? `Time to production: ${toProduction.join(', ')}`
          : 'No release flag reached production yet',
      kind: 'line',
      labels: healthWeeks,
      series: pivot(
        projectFlagTrends,
        (row) => row.project,
        (row) => row.health,
        healthWeeks,
      ),
      unit: '%',
      short: shortWeek,
      max: 100,
    },
    {
      id: 'requests',
      field: 'metricsSummaryTrends',
      title: 'Flag requests by week and project',
      summary: `${compact.format(requests)} flag evaluations reported`,
      kind: 'grouped',
      labels: metricWeeks,
      series: pivot(
        metricsSummaryTrends,
        (row) => row.project,
        (row) => row.totalRequests,
        metricWeeks,
      ),
      unit: ' requests',
      short: shortWeek,
    },
    {
      id: 'updates',
      field: 'environmentTypeTrends',
      title: 'Configuration updates by week and environment type',
      summary: `${updates} configuration updates`,
      kind: 'stacked',
      labels: updateWeeks,
      series: pivot(
        environmentTypeTrends,
        (row) => row.environmentType,
        (row) => row.totalUpdates,
        updateWeeks,
      ),
      unit: ' updates',
      short: shortWeek,
    },
  ];
}
