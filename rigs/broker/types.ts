/** A broker the tests and simulations run against, whichever implementation is behind it. */
export interface TestBroker {
  readonly kind: 'aedes' | 'mosquitto';
  /** MQTT protocol versions it speaks (4 = 3.1.1, 5 = MQTT 5). */
  readonly protocolVersions: readonly number[];
  readonly port: number;
  /** mqtt://127.0.0.1:<port> */
  readonly url: string;
  /** Listens again on the same port after stop(). */
  start(): Promise<void>;
  /** Drops every client and stops listening: a broker outage. */
  stop(): Promise<void>;
  /** Stops for good and removes whatever it created. */
  close(): Promise<void>;
}
