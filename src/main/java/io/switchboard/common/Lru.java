package io.switchboard.common;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

/** Maps and sets that keep at most a given number of entries, dropping the eldest first. */
public final class Lru {
  private Lru() {}

  /**
   * A map of at most {@code max} entries. {@code byAccess}: a read makes an entry young again (the
   * least recently used goes first); otherwise the least recently inserted goes first.
   */
  public static <K, V> Map<K, V> map(int max, boolean byAccess) {
    return new LinkedHashMap<>(16, 0.75f, byAccess) {
      @Override
      protected boolean removeEldestEntry(Map.Entry<K, V> eldest) {
        return size() > max;
      }
    };
  }

  /** A set of at most {@code max} elements, the eldest inserted dropped first. */
  public static <E> Set<E> set(int max) {
    return java.util.Collections.newSetFromMap(map(max, false));
  }
}
