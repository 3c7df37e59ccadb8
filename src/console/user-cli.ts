/**
 * `qrvend console user add NAME --role ROLE`: the password comes from standard input (one line,
 * for scripts) or, at a terminal, from a prompt that does not echo; never from the command line,
 * where `ps` and the shell history would keep it.
 */
import { createInterface } from 'node:readline';
import { ErrorCodes, QrvendError } from '../core/errors.js';
import { checkNewAccount, checkTimeZone, listUsers, putUser } from './store/accounts.js';
import { openStore, storeLabel } from './store/open.js';

const MAX_STDIN_BYTES = 4096;

async function readPipedPassword(): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of process.stdin) {
    size += (chunk as Buffer).length;
    if (size > MAX_STDIN_BYTES)
      throw new QrvendError(
        ErrorCodes.CLI_USAGE,
        `the password on standard input is longer than ${MAX_STDIN_BYTES} bytes`,
      );
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks)
    .toString('utf8')
    .replace(/\r?\n$/, '');
}

async function promptPassword(question: string): Promise<string> {
  const rl = createInterface({ input: process.stdin, output: process.stderr, terminal: true });
  // Typed characters are not echoed: the prompt is written once, then output is muted.
  const out = rl as unknown as { _writeToOutput: (s: string) => void };
  let muted = false;
  out._writeToOutput = (s: string) => {
    if (!muted) process.stderr.write(s);
  };
  return new Promise<string>((resolve) => {
    rl.question(question, (answer) => {
      rl.close();
      process.stderr.write('\n');
      resolve(answer);
    });
    muted = true;
  });
}

export async function readNewPassword(): Promise<string> {
  if (!process.stdin.isTTY) return readPipedPassword();
  const first = await promptPassword('password: ');
  const again = await promptPassword('again: ');
  if (first !== again) throw new QrvendError(ErrorCodes.CLI_USAGE, 'the two passwords differ; nothing was changed');
  return first;
}

export async function addUser(db: string, name: string, role: string, timeZone: string | null = null): Promise<void> {
  checkTimeZone(timeZone);
  const password = await readNewPassword();
  checkNewAccount(name, role, password);
  const store = await openStore(db);
  try {
    await putUser(store.db, name, role, password, { timeZone });
  } finally {
    await store.close();
  }
  process.stdout.write(`account ${name} (${role}) saved in ${storeLabel(db)}\n`);
}

export async function printUsers(db: string): Promise<void> {
  const store = await openStore(db);
  try {
    for (const u of await listUsers(store.db)) {
      process.stdout.write(`${u.name}\t${u.role}\t${u.created_at}\t${u.time_zone ?? '-'}\n`);
    }
  } finally {
    await store.close();
  }
}
