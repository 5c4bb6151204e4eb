/**
 * A week note is free-form JSON, so its shape is bounded instead of its
 * fields: total bytes, nesting depth and keys in all. Deep or key-heavy
 * objects cost every later reader (week read, export, sync) and are refused.
 */
export const NOTE_MAX_BYTES = 64 * 1024;
export const NOTE_MAX_DEPTH = 8;
export const NOTE_MAX_KEYS = 1000;

export interface ShapeReport {
  /** Nesting depth: the note object itself is 1, an object or array inside it 2, and so on. */
  depth: number;
  /** Object keys at every level. */
  keys: number;
}

/** Measures the note, stopping early once a limit is passed (a hostile body can be wide). */
export function measureNote(value: unknown, limits = { depth: NOTE_MAX_DEPTH, keys: NOTE_MAX_KEYS }): ShapeReport {
  let maxDepth = 0;
  let keys = 0;
  // Iterative, so a deep body cannot exhaust the stack.
  const stack: { v: unknown; d: number }[] = [{ v: value, d: 1 }];
  while (stack.length) {
    const { v, d } = stack.pop()!;
    if (v === null || typeof v !== 'object') continue;
    if (d > maxDepth) maxDepth = d;
    if (maxDepth > limits.depth) break;
    if (Array.isArray(v)) {
      for (const item of v) if (item !== null && typeof item === 'object') stack.push({ v: item, d: d + 1 });
    } else {
      const entries = Object.keys(v as object);
      keys += entries.length;
      if (keys > limits.keys) break;
      for (const k of entries) {
        const item = (v as Record<string, unknown>)[k];
        if (item !== null && typeof item === 'object') stack.push({ v: item, d: d + 1 });
      }
    }
  }
  return { depth: maxDepth, keys };
}
