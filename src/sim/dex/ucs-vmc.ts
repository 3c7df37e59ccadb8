/** The DEX/UCS side of the simulated VMC (EVA-DTS 6.1.1 4.5-4.6, the VMD's part). */
import { ACK0, ACK1, encodeBlock, ENQ, EOT, type UcsEvent } from '../../dex/link/ucs-frames.js';
import type { Script } from './script.js';
import { sleep, type Wire } from './wire.js';

const COMM_ID = 'SIM7654321';
const BLOCK = 240;
/** Timer D as the VMD keeps it (a bit over 2 s). */
const WAIT_MS = 2500;

type W = Wire<UcsEvent>;

export async function serveUcs(wire: W, script: Script): Promise<void> {
  const delay = script.behaviour === 'slow' ? 900 : 10;
  const say = (bytes: Buffer | number, ms = delay): Promise<void> =>
    wire.send(typeof bytes === 'number' ? Buffer.from([bytes]) : bytes, ms);
  const is = (kind: UcsEvent['kind']) => (e: UcsEvent) => e.kind === kind;
  while (!wire.isClosed) {
    const first = await wire.next(60_000);
    if (first === null || first.kind !== 'enq' || script.behaviour === 'silent') continue;
    if (script.behaviour === 'initiates') {
      // 4.5.1: the VMD ignores the carrier's ENQ and sends its own; the carrier becomes the slave.
      await say(ENQ);
      if (!(await wire.expect(is('ack0'), WAIT_MS))) continue;
      await say(encodeBlock('soh', Buffer.from(`${COMM_ID}SR00L06`, 'latin1'), true));
      if (!(await wire.expect(is('ack1'), WAIT_MS))) continue;
      await say(EOT);
      if (!(await wire.expect(is('enq'), WAIT_MS))) continue;
      await say(ACK0);
      const block = await wire.expect((e) => e.kind === 'block', WAIT_MS);
      if (!block || block.kind !== 'block' || !block.crcOk) continue;
      await say(ACK1);
      if (!(await wire.expect(is('eot'), WAIT_MS))) continue;
    } else {
      await say(ACK0);
      const block = await wire.expect((e) => e.kind === 'block', WAIT_MS);
      if (!block || block.kind !== 'block' || !block.crcOk || block.text.toString('latin1').charAt(10) !== 'R')
        continue;
      await say(ACK1);
      if (!(await wire.expect(is('eot'), WAIT_MS))) continue;
      await sleep(100);
      await say(ENQ);
      if (!(await wire.expect(is('ack0'), WAIT_MS))) continue;
      // no-data: response code 04 first, as 4.5.3 orders the fields, from an ID ending in 00 (4.5.4 allows it).
      const response = script.behaviour === 'no-data' ? `04${COMM_ID.slice(0, 8)}00R00L06` : `${COMM_ID}00R00L06`;
      await say(encodeBlock('soh', Buffer.from(response, 'latin1'), true));
      if (!(await wire.expect(is('ack1'), WAIT_MS))) continue;
      await say(EOT);
      if (script.behaviour === 'no-data') {
        wire.drop();
        continue;
      }
    }
    await sleep(100);
    if (await sendFile(wire, script, say)) script.served();
    wire.drop();
  }
}

async function sendFile(
  wire: W,
  script: Script,
  say: (b: Buffer | number, ms?: number) => Promise<void>,
): Promise<boolean> {
  await say(ENQ);
  if (!(await wire.expect((e) => e.kind === 'ack0', WAIT_MS))) return false;
  const file = script.file();
  const count = Math.max(1, Math.ceil(file.length / BLOCK));
  let damagedOnce = false;
  for (let i = 0; i < count; i++) {
    const last = i === count - 1;
    const block = encodeBlock('stx', file.subarray(i * BLOCK, (i + 1) * BLOCK), last);
    const want = i % 2 === 0 ? 'ack1' : 'ack0';
    for (let attempt = 1; ; attempt++) {
      if (script.behaviour === 'stall-mid-block' && i === Math.min(1, count - 1)) {
        await say(block.subarray(0, block.length >> 1));
        return false; // and say nothing more until the next ENQ
      }
      const damage = script.behaviour === 'crc-errors' || (script.behaviour === 'crc-once' && !damagedOnce);
      damagedOnce = true;
      await say(damage ? corrupt(block) : block);
      const answer = await wire.expect((e) => e.kind === want || e.kind === 'nak' || e.kind === 'eot', WAIT_MS);
      if (answer?.kind === want) break;
      if (answer?.kind !== 'nak' || attempt >= 3) {
        await say(EOT);
        return false;
      }
    }
  }
  await say(EOT);
  return true;
}

function corrupt(block: Buffer): Buffer {
  const copy = Buffer.from(block);
  copy[copy.length - 1]! ^= 0x5a;
  return copy;
}
