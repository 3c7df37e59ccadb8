/**
 * E-mail through the operator's SMTP server (docs/console.md "E-mail"), with nodemailer: implicit
 * TLS (port 465) or STARTTLS required (587); plain SMTP only to a loopback relay. The login comes
 * from a file of its own (`email.credentialsFile`, JSON `{"user": ..., "password": ...}`, not
 * readable by every local user), never from the configuration. Each message carries its
 * delivery's id as its Message-ID, the same on every retry.
 */
import { readFileSync } from 'node:fs';
import nodemailer, { type Transporter } from 'nodemailer';
import { z } from 'zod';
import { ErrorCodes, QrvendError } from '../../core/errors.js';
import { readPemFile } from '../../core/pem-file.js';
import { refuseExposedSecret } from '../../config/file-modes.js';

export const EmailSettings = z.strictObject({
  host: z.string().min(1).max(253),
  port: z.number().int().min(1).max(65_535),
  /** `implicit` (TLS from the first byte), `starttls` (required), `none` (a loopback relay only). */
  tls: z.enum(['implicit', 'starttls', 'none']).default('starttls'),
  from: z.string().email().max(254),
  credentialsFile: z.string().min(1).max(4096).nullable().default(null),
  /** The site's CA for its SMTP server (PEM), or null for the system's. */
  caFile: z.string().min(1).max(4096).nullable().default(null),
  timeoutS: z.number().int().min(1).max(120).default(20),
});
export type EmailSettings = z.output<typeof EmailSettings>;

const Credentials = z.strictObject({ user: z.string().min(1).max(256), password: z.string().min(1).max(1024) });

function unusable(message: string, hint: string): QrvendError {
  return new QrvendError(ErrorCodes.CONSOLE_EMAIL_UNUSABLE, message, { hint });
}

/** Reads the SMTP login; the file's content is never shown in an error. */
export function readSmtpCredentials(file: string): { user: string; pass: string } {
  refuseExposedSecret(file, 'email.credentialsFile', ErrorCodes.CONSOLE_EMAIL_UNUSABLE, 'email.credentialsFile');
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? 'unreadable';
    throw unusable(`email.credentialsFile ${file} cannot be read (${code})`, 'check the path and its owner');
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = null;
  }
  const checked = Credentials.safeParse(parsed);
  if (!checked.success) {
    throw unusable(
      `email.credentialsFile ${file} is not {"user": "...", "password": "..."}`,
      'write the SMTP login as that JSON object',
    );
  }
  return { user: checked.data.user, pass: checked.data.password };
}

const LOOPBACK_HOST = /^(localhost|127(\.\d{1,3}){3}|::1|\[::1\])$/;

export interface OutgoingMail {
  id: string;
  to: string;
  subject: string;
  text: string;
}

export interface Mailer {
  send(mail: OutgoingMail): Promise<void>;
  close(): void;
}

/** A mailer for the settings; refuses plain SMTP off loopback and an unusable credentials file at start. */
export function createMailer(settings: EmailSettings): Mailer {
  if (settings.tls === 'none' && !LOOPBACK_HOST.test(settings.host)) {
    throw unusable(
      `email.tls "none" with host ${settings.host}: the login and messages would cross the network in clear`,
      'use tls "starttls" or "implicit", or a relay on loopback',
    );
  }
  const auth = settings.credentialsFile === null ? undefined : readSmtpCredentials(settings.credentialsFile);
  const ca = settings.caFile === null ? undefined : readPemFile(settings.caFile, 'certificates', 'email.caFile');
  const transport: Transporter = nodemailer.createTransport({
    host: settings.host,
    port: settings.port,
    secure: settings.tls === 'implicit',
    requireTLS: settings.tls === 'starttls',
    ignoreTLS: settings.tls === 'none',
    auth,
    tls: { ca, minVersion: 'TLSv1.2' },
    connectionTimeout: settings.timeoutS * 1000,
    greetingTimeout: settings.timeoutS * 1000,
    socketTimeout: settings.timeoutS * 1000,
  });
  const domain = settings.from.split('@')[1] ?? 'qrvend.invalid';
  return {
    send: async (mail) => {
      await transport.sendMail({
        from: settings.from,
        to: mail.to,
        subject: mail.subject,
        text: mail.text,
        messageId: `<${mail.id}@${domain}>`,
        headers: { 'X-Qrvend-Delivery': mail.id },
      });
    },
    close: () => transport.close(),
  };
}
