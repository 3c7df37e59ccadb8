/**
 * One recorded chunk of serial traffic, as a technician reads it:
 *   < 2026-11-23T01:02:03.123Z length=3 agent -> board
 *    56 0d 0a                                         V..
 * 16 bytes a line, as hex and as text; anything but printable ASCII shows as "." so a hostile
 * board cannot send escape sequences to the terminal that displays the trace.
 */
const ARROWS = { '<': 'agent -> board', '>': 'board -> agent' } as const;

export function formatChunk(direction: '<' | '>', chunk: Buffer, at: Date): string {
  const lines = [`${direction} ${at.toISOString()} length=${chunk.length} ${ARROWS[direction]}`];
  for (let i = 0; i < chunk.length; i += 16) {
    const row = chunk.subarray(i, i + 16);
    const hex = Array.from(row, (b) => ` ${b.toString(16).padStart(2, '0')}`).join('');
    const text = Array.from(row, (b) => (b >= 0x20 && b < 0x7f ? String.fromCharCode(b) : '.')).join('');
    lines.push(`${hex.padEnd(16 * 3)}  ${text}`);
  }
  return `${lines.join('\n')}\n`;
}
