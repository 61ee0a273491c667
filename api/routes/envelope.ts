/** The spec's list envelope, shared by every list route: one page of presented items and the total. */
export const listEnvelope = <T, P>(page: { items: readonly T[]; total: number }, present: (item: T) => P) => ({
  results: page.items.map(present),
  total_entries: page.total,
});
