import type { Command } from 'commander';
import type { QrCommandOptions } from '../../display/qr-command.js';

export function register(parent: Command): void {
  parent
    .command('qr')
    .description('render a QR code (with an optional amount and message) to the terminal, a PNG file or a framebuffer')
    .argument('<text>', 'the text to encode (up to about 2,300 bytes)')
    .option('--png <file>', 'write a PNG file (written atomically)')
    .option('--fb <device>', 'draw on a framebuffer device, e.g. /dev/fb0 (size and pixel format from sysfs)')
    .option('--terminal', 'print to the terminal (the default when no other output is given)')
    .option('--amount <n>', 'an amount to show under the code, in major units, e.g. 1.50')
    .option('--message <text>', 'a short message to show under the code')
    .option('--width <pixels>', 'PNG width (default display.width)')
    .option('--height <pixels>', 'PNG height (default display.height)')
    .option('--currency <code>', 'currency of --amount (default machine.currencyCode)')
    .option('--decimals <n>', 'decimal places of --amount (default machine.decimalPlaces)')
    .option('--error-correction <level>', 'QR error correction: L, M, Q or H', 'M')
    .option('--sysfs <dir>', 'sysfs root for the framebuffer geometry', '/sys')
    .option('--config <file>', 'configuration file for the defaults (else QRVEND_CONFIG, else config/default.json)')
    .action(async (text: string, opts: QrCommandOptions) => {
      const { runQr } = await import('../../display/qr-command.js');
      runQr(text, opts);
    });
}
