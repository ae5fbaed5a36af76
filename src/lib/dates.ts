/** Dates as the API writes them: ISO 8601, UTC, to the second. */
export function isoSeconds(date: Date): string {
  return `${date.toISOString().slice(0, 19)}Z`;
}

const ISO_INSTANT = /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2}):(\d{2})(?:Z|([+-])(\d{2}):(\d{2})))?$/;

/**
 * `YYYY-MM-DDTHH:MM:SSZ`, or the same with a `+hh:mm` or `-hh:mm` offset, or
 * a date alone, `YYYY-MM-DD`, read as midnight UTC; undefined for anything else,
 * including dates and times that do not exist (2021-02-30, 24:00:00).
 */
export function parseIsoInstant(text: string): Date | undefined {
  const match = ISO_INSTANT.exec(text);
  if (!match) return undefined;
  const [year, month, day, hour, minute, second] = match
    .slice(1, 7)
    .map((part) => (part === undefined ? 0 : Number(part)));
  const offsetHours = match[8] === undefined ? 0 : Number(match[8]);
  const offsetMinutes = match[9] === undefined ? 0 : Number(match[9]);
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return undefined;
  if (hour > 23 || minute > 59 || second > 59 || offsetHours > 23 || offsetMinutes > 59) return undefined;
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day); // not Date.UTC, which reads years 0–99 as 1900–1999
  date.setUTCHours(hour, minute, second, 0);
  const offset = (match[7] === '-' ? -1 : 1) * (offsetHours * 60 + offsetMinutes);
  return new Date(date.getTime() - offset * 60_000);
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}
