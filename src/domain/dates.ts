/** Dates as the API writes them (contract section 4): ISO 8601, UTC, to the second. */
export function isoSeconds(date: Date): string {
  return `${date.toISOString().slice(0, 19)}Z`;
}
