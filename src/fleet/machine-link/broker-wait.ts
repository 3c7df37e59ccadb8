/** How long a graceful stop of the fleet link waits for the broker (the goodbye's PUBACK, the disconnect). */
const STOP_BROKER_WAIT_MS = 2_000;

/** Resolves when `act` calls back, or after STOP_BROKER_WAIT_MS. */
export function withinBrokerWait(act: (done: () => void) => void): Promise<void> {
  return new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, STOP_BROKER_WAIT_MS);
    act(() => {
      clearTimeout(timer);
      resolve();
    });
  });
}
