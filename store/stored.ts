/**
 * A domain record as MongoDB keeps it: its `id` is the document's `_id`. Repositories convert at
 * their edge, so `_id` never leaves store/.
 */
export type Stored<T extends { id: string }> = Omit<T, 'id'> & { _id: string };

// The casts: TypeScript cannot see that Omit<T, 'id'> plus `id` is T again for a generic T.
export const fromStored = <T extends { id: string }>({ _id, ...rest }: Stored<T>): T => ({ id: _id, ...rest }) as unknown as T;

export const toStored = <T extends { id: string }>({ id, ...rest }: T): Stored<T> => ({ _id: id, ...rest }) as unknown as Stored<T>;
