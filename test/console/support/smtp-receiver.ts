/**
 * A real SMTP server on loopback for the tests (the smtp-server package), with STARTTLS on a
 * throwaway certificate and a login it checks; each message is parsed with mailparser and kept,
 * with whether the session was encrypted when it logged in.
 */
import { SMTPServer } from 'smtp-server';
import { simpleParser, type ParsedMail } from 'mailparser';
import type { TlsFixture } from '../../gateway/tls-fixture.js';

export interface ReceivedMail {
  mail: ParsedMail;
  to: string[];
  tlsAtLogin: boolean;
}

export interface SmtpReceiver {
  port: number;
  mails: ReceivedMail[];
  /** Refuse the next n messages with a 451 (a temporary failure). */
  refuseNext: number;
  close(): Promise<void>;
}

export async function startSmtp(tls: TlsFixture, login: { user: string; password: string }): Promise<SmtpReceiver> {
  const secureLogins = new Set<string>();
  const receiver: SmtpReceiver = { port: 0, mails: [], refuseNext: 0, close: async () => undefined };
  const server = new SMTPServer({
    key: tls.key,
    cert: tls.cert,
    authMethods: ['PLAIN', 'LOGIN'],
    onAuth(auth, session, callback) {
      if (auth.username !== login.user || auth.password !== login.password) return callback(new Error('bad login'));
      if (session.secure) secureLogins.add(session.id);
      callback(null, { user: auth.username });
    },
    onData(stream, session, callback) {
      simpleParser(stream)
        .then((mail) => {
          if (receiver.refuseNext > 0) {
            receiver.refuseNext--;
            return callback(Object.assign(new Error('try again later'), { responseCode: 451 }));
          }
          const to = session.envelope.rcptTo.map((r) => r.address);
          receiver.mails.push({ mail, to, tlsAtLogin: secureLogins.has(session.id) });
          callback();
        })
        .catch(callback);
    },
    logger: false,
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.server.address();
  receiver.port = typeof address === 'object' && address !== null ? address.port : 0;
  receiver.close = () => new Promise<void>((resolve) => server.close(() => resolve()));
  return receiver;
}
