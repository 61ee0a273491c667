import { TimeSlicer } from '../../core/time-slice.js';

/** A TimeSlicer whose every step is due: counts the turns a sliced task gives the event loop. */
export class CountingSlicer extends TimeSlicer {
  pauses = 0;
  constructor() {
    super(0);
  }
  override async pause(): Promise<void> {
    this.pauses++;
    await super.pause();
  }
}
