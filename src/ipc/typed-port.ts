/**
 * A MessagePort (or Worker, or parentPort) seen through the message types it carries, so each
 * side of a thread boundary can only send what the other side understands.
 */
import type { MessagePort, Worker } from 'node:worker_threads';

type Endpoint = MessagePort | Worker;

export interface TypedPort<In, Out> {
  send(message: Out): void;
  onMessage(handler: (message: In) => void): void;
  close(): void;
}

export function typedPort<In, Out>(endpoint: Endpoint): TypedPort<In, Out> {
  return {
    send: (message) => endpoint.postMessage(message),
    onMessage: (handler) => {
      endpoint.on('message', handler as (value: unknown) => void);
    },
    close: () => {
      if ('close' in endpoint && typeof endpoint.close === 'function') (endpoint as MessagePort).close();
    },
  };
}
