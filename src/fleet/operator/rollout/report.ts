/**
 * What `qrvend fleet update` prints: the plan, one line per batch and per machine's change of
 * update state, the end with what is still in flight, and the summary; or the same as NDJSON with
 * --json. Device text (details, ids) goes through escapeForTerminal / jsonForTerminal. Pure.
 */
import { escapeForTerminal, jsonForTerminal } from '../../../core/terminal-text.js';
import { allowedFailures, batchSize, tally, type RolloutState } from './plan.js';
import type { RolloutRecord } from './run.js';

function sizes(state: RolloutState): string {
  const out: number[] = [];
  let left = state.targets.length;
  for (let i = 0; left > 0 && out.length < 6; i += 1) {
    const n = Math.min(left, batchSize(state.policy, i));
    out.push(n);
    left -= n;
  }
  return `${out.join(', ')}${left > 0 ? ', ...' : ''}`;
}

/** The plan, printed when a rollout starts or resumes. */
export function formatRolloutPlan(state: RolloutState, file: string, resumed: boolean): string {
  const m = state.manifest;
  const limit = allowedFailures(state.policy.maxFailures, state.targets.length);
  const lines = [
    `${resumed ? 'resuming' : 'rollout'} ${state.rolloutId}: ${m.version} (${m.arch}, ` +
      `${m.artifact}) to ${state.targets.length} machine${state.targets.length === 1 ? '' : 's'} ` +
      `in batches of ${sizes(state) || '-'}; stops after more than ${limit} failure` +
      `${limit === 1 ? '' : 's'}; ${Math.round(state.policy.batchTimeoutMs / 1000)} s per batch`,
  ];
  if (!resumed)
    for (const s of state.skipped)
      lines.push(`skipped ${escapeForTerminal(s.machineId)}: ${escapeForTerminal(s.reason)}`);
  lines.push(
    `state in ${file}; if interrupted, resume with: qrvend fleet update ` +
      `--resume ${file} --sign-key KEY --key-id ID (and the broker options)`,
  );
  return `${lines.join('\n')}\n`;
}

const FAILED = new Set(['failed', 'refused', 'rolled-back', 'timed-out']);

export function formatRolloutRecord(record: RolloutRecord): string {
  if (record.type === 'batch')
    return (
      `batch ${record.index + 1}: ` +
      `${record.resent ? 'offering again (the last run stopped while sending) to' : 'offering to'}` +
      ` ${record.machineIds.map(escapeForTerminal).join(', ')}\n`
    );
  if (record.type === 'state') {
    const state = FAILED.has(record.state) ? record.state.toUpperCase() : record.state;
    const progress = record.progress ? ` ${record.progress.bytes}/${record.progress.size} bytes` : '';
    return (
      `  ${escapeForTerminal(record.machineId)}  ${state}${progress}` +
      `${record.detail ? `: ${escapeForTerminal(record.detail)}` : ''}\n`
    );
  }
  const inFlight =
    record.inFlight.length > 0
      ? `\nstill in flight (they go on by themselves; see qrvend fleet ` +
        `status): ${record.inFlight.map(escapeForTerminal).join(', ')}`
      : '';
  return (
    `${record.how === 'complete' ? 'complete' : record.how === 'stopped' ? 'STOPPED' : 'interrupted'}` +
    `: ${escapeForTerminal(record.reason)}${inFlight}\n`
  );
}

/** The closing summary: counts, then each machine that did not end healthy. */
export function formatRolloutSummary(state: RolloutState): string {
  const t = tally(state);
  const lines = [
    `${t.healthy} healthy, ${t.failed} failed, ${t.inFlight} in flight, ${t.notOffered} not ` +
      `offered, ${t.skipped} skipped (of ${t.targets + t.skipped} machines asked for)`,
  ];
  for (const target of state.targets) {
    if (target.outcome !== null && target.outcome !== 'healthy')
      lines.push(
        `  ${escapeForTerminal(target.machineId)}  ${target.outcome}` +
          `${target.detail ? `: ${escapeForTerminal(target.detail)}` : ''}`,
      );
  }
  return `${lines.join('\n')}\n`;
}

export function rolloutJsonLine(
  record:
    RolloutRecord | { type: 'plan'; state: RolloutState; file: string } | { type: 'summary'; state: RolloutState },
): string {
  if (record.type === 'plan') {
    const s = record.state;
    const targets = s.targets.map((x) => x.machineId);
    const plan = {
      type: 'plan',
      rolloutId: s.rolloutId,
      version: s.manifest.version,
      arch: s.manifest.arch,
      targets,
      skipped: s.skipped,
      policy: s.policy,
      file: record.file,
    };
    return `${jsonForTerminal(plan)}\n`;
  }
  if (record.type === 'summary') {
    const s = record.state;
    const summary = { type: 'summary', rolloutId: s.rolloutId, ended: s.ended, tally: tally(s), targets: s.targets };
    return `${jsonForTerminal(summary)}\n`;
  }
  return `${jsonForTerminal(record)}\n`;
}
