/**
 * The chaos run's dice: one seeded sequence drives every choice (session kind, prices, kill
 * points, faults), so a failing run replays from its seed as far as timing allows.
 */
import { seededRandom } from '../../src/sim/seeded-random.js';

export class Dice {
  private readonly next: () => number;

  constructor(readonly seed: number) {
    this.next = seededRandom(seed);
  }

  /** 0 <= x < 1 */
  float(): number {
    return this.next();
  }

  /** An integer in [min, max]. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)]!;
  }
}
