const DAY_MS = 86_400_000;

/** `yyyy-MM-dd` of the UTC day containing `instant`. */
export function utcDay(instant: Date): string {
  return instant.toISOString().slice(0, 10);
}

/** Parses a `yyyy-MM-dd` calendar date (UTC midnight); undefined when malformed or impossible. */
export function parseDay(value: string): Date | undefined {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
  if (!match) return undefined;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  const date = new Date(Date.UTC(year, month - 1, day));
  // Date.UTC rolls 2026-02-30 over to March: a different day back means the input was impossible.
  return date.getUTCFullYear() === year &&
    date.getUTCMonth() === month - 1 &&
    date.getUTCDate() === day
    ? date
    : undefined;
}

/** `yyyy-MM-dd` plus `days` (negative allowed). */
export function addDays(day: string, days: number): string {
  return utcDay(new Date(Date.parse(`${day}T00:00:00.000Z`) + days * DAY_MS));
}

/** The very end of a UTC day, the `date` of every insights row: `2026-11-20T23:59:59.999Z`. */
export function endOfDay(day: string): string {
  return `${day}T23:59:59.999Z`;
}

/** Monday 00:00 UTC of the ISO week containing `instant`. */
export function weekStart(instant: Date): Date {
  const midnight = Date.parse(`${utcDay(instant)}T00:00:00.000Z`);
  const sinceMonday = (new Date(midnight).getUTCDay() + 6) % 7;
  return new Date(midnight - sinceMonday * DAY_MS);
}

/**
 * ISO 8601 week-year and week, Monday start, zero-padded: `2026-47`. The week-year is the year
 * of the week's Thursday, so Monday 2024-12-30 is `2025-01` (what the Unleash UI labels show).
 */
export function isoWeek(day: string): string {
  const monday = weekStart(new Date(`${day}T00:00:00.000Z`));
  const thursday = new Date(monday.getTime() + 3 * DAY_MS);
  const year = thursday.getUTCFullYear();
  // January 4th is always in week 1; its week's Thursday is the first Thursday of the year.
  const jan4 = new Date(Date.UTC(year, 0, 4));
  const week1Thursday = new Date(weekStart(jan4).getTime() + 3 * DAY_MS);
  const week = Math.round((thursday.getTime() - week1Thursday.getTime()) / (7 * DAY_MS)) + 1;
  return `${year}-${String(week).padStart(2, '0')}`;
}
