/**
 * A token the console holds for this tab only: in sessionStorage (gone when the tab closes) under
 * its own entry. The client-token session (api.ts) and the admin token (admin.ts) each keep one.
 */
export interface StoredSession<T> {
  /** The stored value, or none when there is none, it does not parse, or it is not `valid`. */
  load(): T | undefined;
  /** Keeps `value`, or forgets the entry when there is none. */
  save(value: T | undefined): void;
}

export function storedSession<T>(storageKey: string, valid: (parsed: Partial<T>) => boolean): StoredSession<T> {
  return {
    load() {
      try {
        const text = sessionStorage.getItem(storageKey);
        const parsed = text ? (JSON.parse(text) as T) : undefined;
        return parsed && valid(parsed) ? parsed : undefined;
      } catch {
        return undefined;
      }
    },
    save(value) {
      if (value) sessionStorage.setItem(storageKey, JSON.stringify(value));
      else sessionStorage.removeItem(storageKey);
    },
  };
}
