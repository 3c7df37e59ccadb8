/**
 * The wallet's side of a Start in the start-overhead bench, as bytes: the request is written in
 * one write on a socket the bench connected itself (so the Start is timed from the moment its
 * bytes leave), and the answer is read to the connection's end (`Connection: close`).
 */

/** A whole HTTP/1.1 POST of a JSON body to `url`, asking the server to close after answering. */
export function rawPostRequest(url: URL, body: string): Buffer {
  const bytes = Buffer.from(body, 'utf8');
  const head =
    `POST ${url.pathname}${url.search} HTTP/1.1\r\nHost: ${url.host}\r\nContent-Type: ` +
    `application/json\r\nContent-Length: ${bytes.length}\r\nConnection: close\r\n\r\n`;
  return Buffer.concat([Buffer.from(head, 'latin1'), bytes]);
}

/** The JSON body of a whole HTTP/1.x answer with a Content-Length; throws, naming what is wrong, otherwise. */
export function parseAnswerJson(raw: Buffer): Record<string, unknown> {
  const split = raw.indexOf('\r\n\r\n');
  if (split < 0) throw new Error('the answer has no complete head');
  const head = raw.subarray(0, split).toString('latin1');
  if (!/^HTTP\/1\.[01] \d{3} /.test(head))
    throw new Error(`the answer is not HTTP/1.x: ${JSON.stringify(head.slice(0, 40))}`);
  if (/^transfer-encoding:/im.test(head))
    throw new Error('the answer has a Transfer-Encoding; a Content-Length is expected');
  const length = /^content-length:[ \t]*(\d+)[ \t]*$/im.exec(head)?.[1];
  if (length === undefined) throw new Error('the answer has no Content-Length');
  const body = raw.subarray(split + 4);
  if (body.length !== Number(length))
    throw new Error(`the answer's body has ${body.length} bytes, its Content-Length says ${length}`);
  const parsed: unknown = JSON.parse(body.toString('utf8'));
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed))
    throw new Error('the answer is not a JSON object');
  return parsed as Record<string, unknown>;
}
