export type { ByteLink, OpenLink } from './types.js';
export { LineFramer, type LineFramerHandlers } from './line-framer.js';
export { openSerialLink, serialOpener, type SerialLinkOptions } from './serial-link.js';
export { openTtyLink, ttyOpener, type TtyLinkOptions } from './tty-link.js';
export { MemoryWire } from './memory-wire.js';
export { LinkSupervisor, type LinkSupervisorOptions, type LinkStats } from './link-supervisor.js';
export { createMdbTransport, type MdbTransport } from './mdb-transport.js';
