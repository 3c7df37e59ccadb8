/**
 * Shared parts of the hostile tests (docs/decisions/hardening.md): a raw Start over loopback from a chosen local
 * address, the CLI as a child process, and scratch directories that are always removed.
 */
import { spawn } from 'node:child_process';
import { request } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Rig } from '../../rigs/rig.js';
import { startEndpoint } from '../../src/sim/wallet/index.js';

export const MAIN_JS = fileURLToPath(new URL('../../src/cli/main.js', import.meta.url));

export interface RawReply {
  status: number;
  json: { Status?: { Verdict?: string; Code?: number | null; StatusMessage?: string | null } } & Record<
    string,
    unknown
  >;
}

/** POSTs `body` (text, sent as is) to the rig's Start endpoint; null when no answer came within `deadlineMs`. */
export function postStart(
  rig: Rig,
  body: string,
  options: { localAddress?: string; deadlineMs?: number } = {},
): Promise<RawReply | null> {
  const url = new URL(startEndpoint(rig.agent!.startOrigin!, rig.integratorName));
  return new Promise((resolve) => {
    let settled = false;
    const done = (value: RawReply | null) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(value);
    };
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname,
        method: 'POST',
        agent: false,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
        ...(options.localAddress ? { localAddress: options.localAddress } : {}),
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          try {
            done({ status: res.statusCode ?? 0, json: JSON.parse(Buffer.concat(chunks).toString('utf8')) });
          } catch {
            done(null);
          }
        });
        res.on('error', () => done(null));
      },
    );
    const timer = setTimeout(() => (req.destroy(), done(null)), options.deadlineMs ?? 10_000);
    req.on('error', () => done(null));
    req.end(body);
  });
}

/** A valid Start body for the rig, with members overridden (or raw text appended by the caller). */
export function startBody(rig: Rig, members: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    AppUserId: 'hostile-user-1',
    SecretToken: rig.secretToken,
    TerminalId: rig.terminalId,
    TransactionId: `hostile-${Date.now()}-${Math.random().toString(36).slice(2, 10)}`,
    Balance: 5,
    ...members,
  };
}

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `qrvend <args>` to its end (killed after `timeoutMs`). */
export function runCli(
  args: string[],
  options: { env?: NodeJS.ProcessEnv; timeoutMs?: number; umask?: number } = {},
): Promise<CliResult> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [MAIN_JS, ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, QRVEND_CONFIG: '', ...options.env },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 20_000);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

export function scratchDir(prefix: string): { dir: string; cleanup(): void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
