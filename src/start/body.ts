/**
 * Reading a request body with two bounds: size and time. A body that passes `maxBytes` is cut
 * off at that chunk (chunked uploads declare no length, so the declaration check alone is not
 * enough); a body that has not arrived by `deadlineMs` is cut off too (a slow sender holds a
 * connection slot; Node's own requestTimeout is only checked every few seconds).
 */
import type { IncomingMessage } from 'node:http';

export type BodyResult =
  | { kind: 'body'; body: Buffer }
  | { kind: 'too-large'; receivedBytes: number }
  | { kind: 'timeout'; receivedBytes: number }
  | { kind: 'aborted' };

export function readLimitedBody(req: IncomingMessage, maxBytes: number, deadlineMs: number): Promise<BodyResult> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let received = 0;
    let settled = false;

    const finish = (result: BodyResult): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onAbort);
      req.off('close', onClose);
      // Stop pulling bytes we will not use; the server answers and closes the connection.
      if (result.kind !== 'body') req.pause();
      resolve(result);
    };
    const onData = (chunk: Buffer): void => {
      received += chunk.length;
      if (received > maxBytes) {
        finish({ kind: 'too-large', receivedBytes: received });
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = (): void => finish({ kind: 'body', body: Buffer.concat(chunks, received) });
    const onAbort = (): void => finish({ kind: 'aborted' });
    const onClose = (): void => {
      if (!req.complete) finish({ kind: 'aborted' });
    };
    const timer = setTimeout(() => finish({ kind: 'timeout', receivedBytes: received }), deadlineMs);
    timer.unref();

    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onAbort);
    req.on('close', onClose);
  });
}
