/**
 * `Intl.ListFormat` constructed on first use instead of at construction, for the payment worker.
 *
 * got's dependency @sindresorhus/is builds two `Intl.ListFormat('en', ...)` objects when its module
 * loads, for the text of a TypeError it throws only when got is called with invalid options. Building
 * one makes ICU read its English list-format data, lookup tables and locale fallbacks out of the
 * ICU data embedded in the node binary: about 4 MB of the binary's pages become resident, and stay
 * so, in a process that never formats a list (measured with /proc/<pid>/pagemap over the binary's
 * `icudt*_dat` symbol: 4.7 MB resident with got loaded, 0.4 MB without; BENCHMARKS.md, "Memory").
 *
 * Only the constructions whose arguments are certain to be valid are deferred (a locale `xx`, `xxx`
 * or `xx-YY`, an options object holding only documented values), so every call that would throw
 * still throws at construction. A deferred object builds the real formatter on its first
 * method call and answers `instanceof Intl.ListFormat` like the real one.
 */

type ListFormatArgs = ConstructorParameters<typeof Intl.ListFormat>;

const STYLES = new Set([undefined, 'long', 'short', 'narrow']);
const TYPES = new Set([undefined, 'conjunction', 'disjunction', 'unit']);
const MATCHERS = new Set([undefined, 'lookup', 'best fit']);
const OPTION_KEYS = new Set(['style', 'type', 'localeMatcher']);

/** True when `new Intl.ListFormat(...args)` cannot throw, so building it later changes nothing. */
function certainlyValid(args: ListFormatArgs): boolean {
  const [locales, options] = args;
  if (typeof locales !== 'string' || !/^[a-z]{2,3}(-[A-Z]{2})?$/.test(locales)) return false;
  if (options === undefined) return true;
  if (typeof options !== 'object' || options === null || Object.getPrototypeOf(options) !== Object.prototype)
    return false;
  const o = options as Record<string, unknown>;
  return (
    Object.keys(o).every((k) => OPTION_KEYS.has(k)) &&
    STYLES.has(o.style as string) &&
    TYPES.has(o.type as string) &&
    MATCHERS.has(o.localeMatcher as string)
  );
}

let installed = false;

/** Replaces this thread's `Intl.ListFormat` with the deferring constructor (once; idempotent). */
export function installLazyListFormat(): void {
  if (installed || typeof Intl.ListFormat !== 'function') return;
  installed = true;
  const Real = Intl.ListFormat;
  const lazy: typeof Intl.ListFormat = new Proxy(Real, {
    construct(target, args: ListFormatArgs, newTarget): object {
      // Subclasses and uncertain arguments: the real constructor, now (same errors, same object).
      if (newTarget !== lazy || !certainlyValid(args))
        return Reflect.construct(target, args, newTarget === lazy ? target : newTarget) as object;
      let real: Intl.ListFormat | null = null;
      const get = () => (real ??= new Real(...args));
      const deferred = Object.create(Real.prototype) as Intl.ListFormat;
      Object.defineProperties(deferred, {
        format: { value: (list: Iterable<string>) => get().format(list) },
        formatToParts: { value: (list: Iterable<string>) => get().formatToParts(list) },
        resolvedOptions: { value: () => get().resolvedOptions() },
      });
      return deferred;
    },
  });
  // The global is writable at run time; TypeScript's lib declares it read-only.
  Object.defineProperty(Intl, 'ListFormat', { value: lazy, writable: true, configurable: true, enumerable: false });
}
