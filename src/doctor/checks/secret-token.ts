/**
 * The Start SecretToken file: present, private, and of the right length. The token itself is read
 * only to measure it and is never printed, logged or put in the report.
 */
import { readFileSync, statSync } from 'node:fs';
import type { Check } from '../types.js';

/** The seed fixes the SecretToken at 64 characters. */
const TOKEN_LENGTH = 64;

export const secretTokenCheck: Check = {
  id: 'secret-token',
  title: 'Start secret token file',
  needsConfig: true,
  async run(_ctx, config) {
    const path = config.start.secretTokenFile;
    let mode: number;
    try {
      mode = statSync(path).mode & 0o777;
    } catch {
      return {
        status: 'FAIL',
        summary: `${path} does not exist`,
        action: `write the 64-character SecretToken from the provider into ${path} (chmod 0640, chown root:qrvend)`,
        details: { path, present: false },
      };
    }
    const details: Record<string, unknown> = { path, present: true, mode: `0${mode.toString(8)}` };
    if (mode & 0o004 || mode & 0o022) {
      return {
        status: 'FAIL',
        summary: `${path} has mode 0${mode.toString(8)}: readable by everyone or writable by others`,
        action: `chmod 0640 ${path} && chown root:qrvend ${path}`,
        details,
      };
    }
    let length: number;
    try {
      // Only the length leaves this block; the content goes out of scope at once.
      length = readFileSync(path, 'utf8').trim().length;
    } catch {
      return {
        status: 'WARN',
        summary: `${path} is present (mode 0${mode.toString(8)}) but this user cannot read it to check it`,
        action: 'run qrvend doctor as root (sudo) to check the token length',
        details,
      };
    }
    details.lengthValid = length === TOKEN_LENGTH;
    if (length === 0) {
      return {
        status: 'FAIL',
        summary: `${path} is empty`,
        action: `write the 64-character SecretToken into ${path}`,
        details,
      };
    }
    if (length !== TOKEN_LENGTH) {
      return {
        status: 'FAIL',
        summary: `${path} does not hold a 64-character token`,
        action: `rewrite ${path} with exactly the SecretToken the provider issued (64 characters, no quotes)`,
        details,
      };
    }
    return { status: 'OK', summary: `${path} present, mode 0${mode.toString(8)}, length valid`, details };
  },
};
