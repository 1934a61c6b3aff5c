/** A bounded map that evicts the least recently used entry; `onEvict` releases what it held. */
export type Lru<V> = {
  get: (key: string) => V | undefined;
  set: (key: string, value: V) => void;
  delete: (key: string) => void;
  size: () => number;
  /** Drop every entry, releasing each. */
  clear: () => void;
};

export const createLru = <V>(maxEntries: number, onEvict: (value: V) => void = () => undefined): Lru<V> => {
  const entries = new Map<string, V>();
  return {
    get(key) {
      const value = entries.get(key);
      if (value !== undefined) {
        entries.delete(key);
        entries.set(key, value);
      }
      return value;
    },
    set(key, value) {
      entries.delete(key);
      if (entries.size >= maxEntries) {
        const [oldestKey, oldest] = entries.entries().next().value!;
        entries.delete(oldestKey);
        onEvict(oldest);
      }
      entries.set(key, value);
    },
    delete: (key) => void entries.delete(key),
    size: () => entries.size,
    clear() {
      for (const value of entries.values()) onEvict(value);
      entries.clear();
    },
  };
};
