/**
 * The fleet broker of the vend benchmarks in its own process: aedes on loopback, the TCP gate the
 * daemon connects through (rigs/broker/tcp-gate.ts) and the operator's command traffic
 * (command-traffic.ts). In the bench's own process they shared the event loop that reads the VMC
 * end of the pty, so their work sat inside the vend figures they were meant to test; a real broker
 * and a real operator are other machines.
 *
 * Started by BrokerProcess (broker.ts; fork, IPC). Messages in: {type:'mode', mode},
 * {type:'traffic.start', machineId, perSecond}, {type:'traffic.stop'}, {type:'stop'}. Messages out:
 * {type:'ready', brokerUrl, gateUrl, trustFile}, {type:'mode.set', mode}, {type:'traffic.started'},
 * {type:'traffic.stopped', counts}.
 */
import { startAedesBroker, startTcpGate, type GateMode } from '../../rigs/broker/index.js';
import { commandTraffic } from './command-traffic.js';

type Incoming =
  | { type: 'mode'; mode: GateMode }
  | { type: 'traffic.start'; prefix: string; machineId: string; perSecond: number }
  | { type: 'traffic.stop' }
  | { type: 'stop' };

const broker = await startAedesBroker();
const gate = await startTcpGate({ port: broker.port });
const traffic = commandTraffic();

async function stop(): Promise<never> {
  await traffic.stop().catch(() => {});
  await gate.close().catch(() => {});
  await broker.close().catch(() => {});
  process.exit(0);
}

process.on('message', (msg: Incoming) => {
  switch (msg.type) {
    case 'mode':
      gate.setMode(msg.mode);
      process.send?.({ type: 'mode.set', mode: msg.mode });
      return;
    case 'traffic.start':
      void traffic.start(broker.url, msg.prefix, msg.machineId, msg.perSecond).then(
        () => process.send?.({ type: 'traffic.started' }),
        (err: unknown) => process.send?.({ type: 'traffic.failed', message: (err as Error).message }),
      );
      return;
    case 'traffic.stop':
      void traffic.stop().then((counts) => process.send?.({ type: 'traffic.stopped', counts }));
      return;
    case 'stop':
      void stop();
  }
});
process.on('disconnect', () => void stop());
process.send?.({ type: 'ready', brokerUrl: broker.url, gateUrl: gate.url, trustFile: traffic.trustFile });
