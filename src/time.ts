// Times for a person.

/** ISO-8601 UTC with nanoseconds: 2020-06-10T09:19:54.740079000Z. */
export function isoTimeNs(sec: number, nsec: number): string {
  const date = new Date(sec * 1000);
  const frac = String(nsec).padStart(9, "0");
  if (Number.isNaN(date.getTime())) return `${sec}.${frac}s`;
  const iso = date.toISOString();
  // toISOString ends in ".mmmZ"; swap the milliseconds for all nine digits.
  return `${iso.slice(0, -4)}${frac}Z`;
}
