// SQL helpers shared by the device and group stores: the per-handle statement cache and LIKE pattern escaping.
export { prepareCached } from '../../db/statements';

/** A LIKE pattern matching `text` anywhere, with its wildcards escaped (use with `ESCAPE '\\'`). */
export function containsPattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, '\\$&')}%`;
}
