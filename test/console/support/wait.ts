/** Waits for a condition with a deadline (never a timed assertion: only how long to keep looking). */
export async function waitFor<T>(
  what: string,
  probe: () => Promise<T | undefined | false> | T | undefined | false,
  deadlineMs = 20_000,
): Promise<T> {
  const until = performance.now() + deadlineMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (performance.now() > until) throw new Error(`gave up waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}
