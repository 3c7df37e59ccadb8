export * from './types.js';
export * from './amount.js';
export { parseBoardLine, encodeBoardLine } from './board-lines.js';
export { encodeCommand, parseCommand } from './commands.js';
export { NoiseCounter } from './noise.js';
