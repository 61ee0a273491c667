/**
 * Dates for ranking, by rule (no model): the period a query asks about ("on 31 October, 2022", "in
 * May 2023", "in June", "in 2022") and the dates a turn speaks of, its own time (core/memory-time.ts)
 * and the relative dates in its text resolved against it ("yesterday", "last week", "two weeks
 * ago", "last Friday"). Pure.
 */

export const MONTHS = [
  'january',
  'february',
  'march',
  'april',
  'may',
  'june',
  'july',
  'august',
  'september',
  'october',
  'november',
  'december',
];
const MONTH = `(${MONTHS.join('|')}|jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec)`;
export const WEEKDAYS = ['sunday', 'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday'];
const DAY_MS = 86_400_000;
const NUMBER_WORDS: Record<string, number> = { a: 1, an: 1, one: 1, two: 2, three: 3, four: 4, five: 5, six: 6, couple: 2, few: 3 };

const monthIndex = (name: string): number => MONTHS.findIndex((month) => month.startsWith(name.toLowerCase().slice(0, 3)));

/** What a query asks about: a day, a month (of a year, or of any year) or a year. */
export interface QueryPeriod {
  year?: number;
  month?: number;
  day?: number;
}

/** The most specific date the query names, or null. */
export function queryPeriod(query: string): QueryPeriod | null {
  const text = query.toLowerCase();
  // "31 October, 2022", "October 31, 2022", "October 31st", "31 October"
  const dayFirst = new RegExp(`\\b(\\d{1,2})(?:st|nd|rd|th)?\\s+(?:of\\s+)?${MONTH}\\b,?(?:\\s+(\\d{4}))?`).exec(text);
  if (dayFirst) return withYear({ day: Number(dayFirst[1]), month: monthIndex(dayFirst[2]!) }, dayFirst[3]);
  const monthFirst = new RegExp(`\\b${MONTH}\\s+(\\d{1,2})(?:st|nd|rd|th)?\\b(?!\\d)(?:,?\\s+(\\d{4}))?`).exec(text);
  if (monthFirst && Number(monthFirst[2]) <= 31)
    return withYear({ day: Number(monthFirst[2]), month: monthIndex(monthFirst[1]!) }, monthFirst[3]);
  const monthYear = new RegExp(`\\b${MONTH}\\b,?(?:\\s+(?:of\\s+)?(\\d{4}))?`).exec(text);
  // "may" is also a verb: only as a month when a year follows or "in"/"of"/"during" comes before.
  if (monthYear && (monthYear[1] !== 'may' || monthYear[2] || /\b(in|of|during|early|late|mid)\s+may\b/.test(text))) {
    return withYear({ month: monthIndex(monthYear[1]!) }, monthYear[2]);
  }
  const year = /\b(?:in|during|of|since)\s+((?:19|20)\d{2})\b/.exec(text);
  if (year) return { year: Number(year[1]) };
  return null;
}

const withYear = (period: QueryPeriod, year: string | undefined): QueryPeriod => (year ? { ...period, year: Number(year) } : period);

/** Dates a turn speaks of: its own time and the relative dates in its text resolved against it. */
export function turnDates(text: string, time: Date): Date[] {
  const dates = [time];
  const lower = text.toLowerCase();
  const shift = (days: number) => dates.push(new Date(time.getTime() + days * DAY_MS));
  if (/\byesterday\b/.test(lower)) shift(-1);
  if (/\blast night\b/.test(lower)) shift(-1);
  if (/\btomorrow\b/.test(lower)) shift(1);
  if (/\b(last|past) (week|weekend)\b/.test(lower)) shift(-7);
  if (/\bnext (week|weekend)\b/.test(lower)) shift(7);
  if (/\b(last|past) month\b/.test(lower)) shift(-30);
  if (/\bnext month\b/.test(lower)) shift(30);
  if (/\blast year\b/.test(lower)) shift(-365);
  for (const match of lower.matchAll(/\b(\d+|a|an|one|two|three|four|five|six|couple|few)\s+(?:of\s+)?(day|week|month|year)s?\s+ago\b/g)) {
    const count = NUMBER_WORDS[match[1]!] ?? Number(match[1]);
    const unit = { day: 1, week: 7, month: 30, year: 365 }[match[2] as 'day' | 'week' | 'month' | 'year'];
    shift(-count * unit);
  }
  for (const match of lower.matchAll(/\blast (sunday|monday|tuesday|wednesday|thursday|friday|saturday)\b/g)) {
    const target = WEEKDAYS.indexOf(match[1]!);
    const back = (time.getUTCDay() - target + 7) % 7 || 7;
    shift(-back);
  }
  return dates;
}

/**
 * How well a turn's dates meet the period: 1 inside it, 0.5 within a week of a named day (people
 * say "last week" loosely), else 0.
 */
export function periodMatch(period: QueryPeriod, dates: readonly Date[]): number {
  let best = 0;
  for (const date of dates) {
    if (period.year !== undefined && date.getUTCFullYear() !== period.year) {
      // A day near the turn of a year still counts as near.
      if (period.day === undefined) continue;
    }
    if (period.day !== undefined && period.month !== undefined) {
      const years = period.year !== undefined ? [period.year] : [date.getUTCFullYear()];
      for (const year of years) {
        const distance = Math.abs(date.getTime() - Date.UTC(year, period.month, period.day)) / DAY_MS;
        if (distance < 1.5) return 1;
        if (distance <= 7) best = Math.max(best, 0.5);
      }
      continue;
    }
    if (period.month !== undefined) {
      if (date.getUTCMonth() === period.month) return 1;
      continue;
    }
    if (period.year !== undefined && date.getUTCFullYear() === period.year) return 1;
  }
  return best;
}

/**
 * Whether one of a turn's dates falls on the very day the query names (a UTC calendar day, in the
 * named year or, without one, in any year): false when the period is no day. `periodMatch` also
 * counts the days either side and the week around; this is the day itself.
 */
export function onNamedDay(period: QueryPeriod, dates: readonly Date[]): boolean {
  if (period.day === undefined || period.month === undefined) return false;
  return dates.some(
    (date) =>
      date.getUTCDate() === period.day &&
      date.getUTCMonth() === period.month &&
      (period.year === undefined || date.getUTCFullYear() === period.year),
  );
}
