import assert from 'node:assert/strict';
import { it } from 'node:test';
import { TimeSlicer } from './time-slice.js';

const spin = (ms: number): void => {
  const until = performance.now() + ms;
  while (performance.now() < until);
};

it('is due once its slice is spent, and starts a new slice after a pause', async () => {
  const slicer = new TimeSlicer(5);
  assert.equal(slicer.due(), false);
  spin(6);
  assert.equal(slicer.due(), true);
  await slicer.pause();
  assert.equal(slicer.due(), false);
});

it('gives the event loop a turn in a pause: a timer due meanwhile runs before the work goes on', async () => {
  const slicer = new TimeSlicer(2);
  let timerRan = false;
  setTimeout(() => (timerRan = true), 0);
  let stepsBeforeTimer = 0;
  for (let step = 0; step < 50 && !timerRan; step++) {
    spin(1);
    stepsBeforeTimer += 1;
    if (slicer.due()) await slicer.pause();
  }
  assert.ok(timerRan, 'the timer ran between slices');
  assert.ok(stepsBeforeTimer <= 4, `it ran within a slice or two (${stepsBeforeTimer} steps of 1 ms, slices of 2 ms)`);
});

it('step() pauses only when due: a resolved await alone lets no timer run', async () => {
  const slicer = new TimeSlicer(10_000);
  let timerRan = false;
  setTimeout(() => (timerRan = true), 0);
  spin(2);
  for (let step = 0; step < 100; step++) await slicer.step();
  assert.equal(timerRan, false);
});
