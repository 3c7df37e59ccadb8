/** The DDCMP slave side of the simulated VMC (EVA-DTS 6.1.1 3.5-3.7, application note 6.2.1). */
import {
  ACK,
  BAUD_CODES,
  control,
  dataMessage,
  NACK,
  STACK,
  START,
  type DdcmpEvent,
} from '../../dex/link/ddcmp-frames.js';
import type { Script } from './script.js';
import type { Wire } from './wire.js';

/** The fastest rate this slave claims (code 6 = 38400), below what the link asks: the lower one wins. */
const SLAVE_BAUD_CODE = 6;
const BLOCK = 200;
const WAIT_MS = 6000;
type W = Wire<DdcmpEvent>;

/** A START in the middle of a session: 3.5.2.2 says to drop everything and begin again. */
class Restart {
  constructor(readonly mbd: number) {}
}

export async function serveDdcmp(wire: W, script: Script): Promise<void> {
  const delay = script.behaviour === 'slow' ? 150 : 40;
  while (!wire.isClosed) {
    const e = await wire.next(60_000);
    if (!e || e.kind !== 'control' || e.type !== START || script.behaviour === 'silent') continue;
    let mbd: number | null = e.b5;
    while (mbd !== null) {
      try {
        if (await session(wire, script, delay, mbd)) script.served();
        mbd = null;
      } catch (err) {
        if (!(err instanceof Restart)) throw err;
        mbd = err.mbd;
      }
    }
    wire.drop();
  }
}

/** Waits for what `match` accepts; a START on the way restarts the session. */
async function expect(wire: W, match: (e: DdcmpEvent) => boolean, timeoutMs: number): Promise<DdcmpEvent | null> {
  const e = await wire.expect((m) => match(m) || (m.kind === 'control' && m.type === START), timeoutMs);
  if (e?.kind === 'control' && e.type === START && !match(e)) throw new Restart(e.b5);
  return e;
}

async function session(wire: W, script: Script, delay: number, mbd: number): Promise<boolean> {
  const code = mbd === 0 ? 0 : Math.min(mbd, SLAVE_BAUD_CODE);
  await wire.send(control(STACK, SLAVE_BAUD_CODE, code), delay);
  // The next START comes at the agreed rate; it restarts the session with mbd 0 (throws Restart).
  if (code !== 0) await wire.setBaud(BAUD_CODES[code]!);
  let rx = 0;
  let tx = 0;
  /** Waits for the master's next command; ACKs it. */
  const command = async (): Promise<Buffer | null> => {
    for (;;) {
      const e = await expect(wire, (m) => m.kind === 'data', WAIT_MS);
      if (!e || e.kind !== 'data') return null;
      if (!e.crcOk) {
        await wire.send(control(NACK, rx, 0, 2), delay);
        continue;
      }
      if (e.tx === rx) {
        await wire.send(control(ACK, rx, 0), delay);
        continue;
      }
      rx = e.tx;
      await wire.send(control(ACK, rx, 0), delay);
      return e.payload;
    }
  };
  /** Sends one data message until the master ACKs it. */
  const reply = async (payload: Buffer, damage: boolean, last = false): Promise<boolean> => {
    tx = (tx + 1) & 0xff;
    for (let attempt = 1; attempt <= 5; attempt++) {
      const msg = dataMessage(payload, rx, tx, last);
      if (damage) msg[msg.length - 1]! ^= 0x5a;
      await wire.send(msg, delay);
      const e = await expect(wire, (m) => m.kind === 'control' && (m.type === ACK || m.type === NACK), 1000);
      if (e?.kind === 'control' && e.type === ACK && e.b4 === tx) return true;
      if (script.behaviour === 'crc-once') damage = false;
    }
    return false;
  };

  const way = await command();
  if (!way || way[1] !== 0xe0) return false;
  const serial = Buffer.from('00012345', 'latin1');
  if (
    !(await reply(
      Buffer.concat([
        Buffer.from([0x88, 0xe0, 0x01, 0, 0, 0, 0]),
        serial,
        Buffer.from([0x01, 0x01, 0x00, 0x00, 0x00, 0x00]),
      ]),
      false,
    ))
  )
    return false;
  const read = await command();
  if (!read || read[1] !== 0xe2) return false;
  const file = script.file();
  // A file of 64 KiB or more has no length that fits: FFFF, and the select
  // flag marks the last block (3.6.4.1.3 note 6).
  const length = file.length >= 0xffff ? 0xffff : file.length;
  const accepted = Buffer.from([0x88, 0xe2, 0x01, read[3] ?? 1, 0x01, 0, 0, length & 0xff, length >>> 8]);
  if (!(await reply(accepted, false))) return false;
  const count = Math.max(1, Math.ceil(file.length / BLOCK));
  for (let i = 0; i < count; i++) {
    const payload = Buffer.concat([Buffer.from([0x99, i & 0xff]), file.subarray(i * BLOCK, (i + 1) * BLOCK)]);
    if (script.behaviour === 'stall-mid-block' && i === Math.min(1, count - 1)) {
      const msg = dataMessage(payload, rx, (tx + 1) & 0xff);
      await wire.send(msg.subarray(0, msg.length >> 1), delay);
      return false;
    }
    const damage = script.behaviour === 'crc-errors' || (script.behaviour === 'crc-once' && i === 0);
    if (!(await reply(payload, damage, length === 0xffff && i === count - 1))) return false;
  }
  const finish = await command();
  return finish !== null && finish[1] === 0xff;
}
