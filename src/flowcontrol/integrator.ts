/**
 * The time integral of a level's seat demand (seats in use plus seats waiting), as upstream's
 * `fairqueuing.Integrator`: average, standard deviation and extremes over a period, which the
 * borrowing adjustment reads and restarts every 10 s.
 */
import type { Clock } from '../clock';

export interface IntegratorResults {
  durationSeconds: number;
  average: number;
  /** NaN when the period was empty. */
  deviation: number;
  min: number;
  max: number;
}

export class Integrator {
  private x = 0;
  private min = 0;
  private max = 0;
  private lastMs: number;
  private elapsed = 0;
  private integralX = 0;
  private integralXX = 0;

  constructor(private readonly clock: Clock) {
    this.lastMs = clock.now();
  }

  set(x: number): void {
    this.update();
    this.x = x;
    if (x < this.min) this.min = x;
    if (x > this.max) this.max = x;
  }

  /** This period's results; the next period starts at the current value. */
  reset(): IntegratorResults {
    this.update();
    const results: IntegratorResults = { durationSeconds: this.elapsed, average: Number.NaN, deviation: Number.NaN, min: this.min, max: this.max };
    if (this.elapsed > 0) {
      results.average = this.integralX / this.elapsed;
      const variance = this.integralXX / this.elapsed - results.average * results.average;
      if (variance >= 0) results.deviation = Math.sqrt(variance);
    }
    this.elapsed = 0;
    this.integralX = 0;
    this.integralXX = 0;
    this.min = this.x;
    this.max = this.x;
    return results;
  }

  private update(): void {
    const now = this.clock.now();
    const dt = (now - this.lastMs) / 1000;
    this.lastMs = now;
    if (dt <= 0) return;
    this.elapsed += dt;
    this.integralX += dt * this.x;
    this.integralXX += dt * this.x * this.x;
  }
}
