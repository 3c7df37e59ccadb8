/**
 * `npm run fleet-sim -- --machines 1000 [--seconds 30] [--rate 100] [--out FILE]`: the fleet
 * simulation (rigs/fleet/run.ts) against a local mosquitto on loopback; prints progress and
 * writes the figures as JSON (default bench/fleet-results.json).
 */
import { Command, Option } from 'commander';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { runFleetSim } from './run.js';

const program = new Command('fleet-sim')
  .description(
    'N simulated machines and the operator side against one local ' +
      'mosquitto; writes latency, broker and device-side figures as JSON',
  )
  .addOption(new Option('--machines <n>', 'simulated machines (one MQTT connection each)').default('1000'))
  .addOption(new Option('--seconds <s>', 'length of the measured run').default('30'))
  .addOption(new Option('--rate <sales/s>', 'sales per second over the whole fleet').default('100'))
  .addOption(new Option('--health <s>', 'health interval per machine, seconds').default('30'))
  .addOption(new Option('--alarms <per s>', 'alarm events per second over the fleet').default('1'))
  .addOption(new Option('--protocol <v>', 'MQTT version of machines and operator').choices(['4', '5']).default('5'))
  .addOption(new Option('--pings <n>', 'command round trips measured after the run').default('50'))
  .addOption(
    new Option('--command <name>', 'the command of those round trips (answered by --handlers beyond ping)').default(
      'ping',
    ),
  )
  .addOption(new Option('--command-args <json>', 'its arguments, one JSON object'))
  .addOption(new Option('--crash <n>', 'machines cut off at the end (their last will is checked)').default('10'))
  .addOption(
    new Option(
      '--handlers <module>',
      'module exporting `handlers` (command name -> handler) for the ' +
        'simulated machines, e.g. a canned `start` for the relay',
    ),
  )
  .addOption(new Option('--no-cli', 'skip timing the real `qrvend fleet status --json`'))
  .addOption(new Option('--out <file>', 'where the JSON goes').default('bench/fleet-results.json'))
  .exitOverride();

function num(value: string, name: string): number {
  const n = Number(value);
  if (!/^\d+(\.\d+)?$/.test(value) || !Number.isFinite(n))
    throw new Error(`--${name} must be a number, got "${value.slice(0, 32)}"`);
  return n;
}

try {
  program.parse(process.argv);
  const f = program.opts<{
    machines: string;
    seconds: string;
    rate: string;
    health: string;
    alarms: string;
    protocol: string;
    pings: string;
    command: string;
    commandArgs?: string;
    crash: string;
    handlers?: string;
    cli: boolean;
    out: string;
  }>();
  const results = await runFleetSim(
    {
      machines: num(f.machines, 'machines'),
      seconds: num(f.seconds, 'seconds'),
      salesPerSecond: num(f.rate, 'rate'),
      healthIntervalS: num(f.health, 'health'),
      alarmsPerSecond: num(f.alarms, 'alarms'),
      protocol: f.protocol === '4' ? 4 : 5,
      pings: num(f.pings, 'pings'),
      command: {
        name: f.command,
        args: f.commandArgs === undefined ? undefined : (JSON.parse(f.commandArgs) as unknown),
      },
      crash: num(f.crash, 'crash'),
      cli: f.cli,
      handlersModule: f.handlers,
    },
    (line) => process.stderr.write(`fleet-sim: ${line}\n`),
  );
  mkdirSync(dirname(f.out), { recursive: true });
  writeFileSync(f.out, `${JSON.stringify(results, null, 2)}\n`);
  process.stdout.write(`${JSON.stringify(results, null, 2)}\nwritten to ${f.out}\n`);
} catch (err) {
  if ((err as { code?: string }).code?.startsWith('commander.')) {
    process.exitCode = (err as { exitCode?: number }).exitCode === 0 ? 0 : 64;
  } else {
    process.stderr.write(`fleet-sim: ${(err as Error).message}\n`);
    process.exitCode = 1;
  }
}
