/**
 * A stand-in for qrvend-gpio.node (native/gpio-chardev.c) for unit tests: chips and lines in
 * memory, with the kernel's rules that matter here (a used line answers EBUSY, release frees it).
 */
import type { ChipInfo, GpioAddon, LineInfo } from '../../../src/device/gpio/chardev.js';

export interface MockLine {
  name: string;
  consumer?: string;
  output?: boolean;
  value?: number;
}

export class MockGpioAddon implements GpioAddon {
  readonly calls: string[] = [];
  private readonly chips = new Map<string, { label: string; lines: Required<MockLine>[] }>();
  private readonly handles = new Map<number, { path: string; offset: number }>();
  private nextFd = 30;

  addChip(path: string, label: string, lines: MockLine[]): this {
    this.chips.set(path, { label, lines: lines.map((l) => ({ consumer: '', output: false, value: 0, ...l })) });
    return this;
  }

  line(path: string, offset: number): Required<MockLine> {
    return this.chip(path).lines[offset]!;
  }

  private chip(path: string) {
    const chip = this.chips.get(path);
    if (!chip) throw Object.assign(new Error(`${path}: No such file or directory`), { code: 'ENOENT' });
    return chip;
  }

  chipInfo(path: string): ChipInfo {
    const chip = this.chip(path);
    return { name: path.replace(/^.*\//, ''), label: chip.label, lines: chip.lines.length };
  }

  lineInfos(path: string): LineInfo[] {
    return this.chip(path).lines.map((l, offset) => ({
      offset,
      name: l.name,
      consumer: l.consumer,
      used: l.consumer !== '',
      output: l.output,
      openDrain: false,
      activeLow: false,
    }));
  }

  request(path: string, offset: number, consumer: string, mode: number, value: number): number {
    this.calls.push(`request ${path} ${offset} ${consumer} mode=${mode} value=${value}`);
    const line = this.chip(path).lines[offset];
    if (!line) throw Object.assign(new Error(`${path}: Invalid argument`), { code: 'EINVAL' });
    if (line.consumer !== '') throw Object.assign(new Error(`${path}: Device or resource busy`), { code: 'EBUSY' });
    line.consumer = consumer;
    if (mode >= 2) {
      line.output = true;
      line.value = value;
    }
    const fd = this.nextFd++;
    this.handles.set(fd, { path, offset });
    return fd;
  }

  private held(fd: number): Required<MockLine> {
    const h = this.handles.get(fd);
    if (!h) throw Object.assign(new Error('bad handle'), { code: 'EINVAL' });
    return this.line(h.path, h.offset);
  }

  getValue(fd: number): number {
    return this.held(fd).value;
  }

  setValue(fd: number, value: number): void {
    this.calls.push(`set ${fd} ${value}`);
    this.held(fd).value = value;
  }

  release(fd: number): void {
    this.calls.push(`release ${fd}`);
    this.held(fd).consumer = '';
    this.handles.delete(fd);
  }
}
