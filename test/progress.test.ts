import { test } from 'node:test'
import assert from 'node:assert/strict'
import { duration, RecentRate, render } from '../src/progress.ts'

test('time left is whole seconds rounded up, in minutes and hours past them', () => {
  assert.equal(duration(0), '0s')
  assert.equal(duration(0.2), '1s')
  assert.equal(duration(59.5), '1m00s')
  assert.equal(duration(119.5), '2m00s')
  assert.equal(duration(125), '2m05s')
  assert.equal(duration(3599.1), '1h00m00s')
  assert.equal(duration(3725), '1h02m05s')
  assert.equal(duration(Infinity), '0s')
})

test('the rate is the last window of counts, so a slow start weighs on it only at first', () => {
  const rate = new RecentRate(10_000)
  rate.add(0, 0)
  assert.equal(rate.perSecond(), 0)
  // Two slow seconds (start-up), then 10 MB a second.
  rate.add(2_000, 1_000_000)
  assert.equal(rate.perSecond(), 500_000)
  for (let ms = 3_000; ms <= 30_000; ms += 1_000) rate.add(ms, 1_000_000 + (ms - 2_000) * 10_000)
  assert.equal(rate.perSecond(), 10_000_000)
  // The rate falls to 1 MB a second: after half a window, half-way between.
  const at = 30_000
  const count = 1_000_000 + 28_000 * 10_000
  for (let s = 1; s <= 5; s++) rate.add(at + s * 1_000, count + s * 1_000_000)
  assert.equal(rate.perSecond(), 5_500_000)
  // The work begun again from a lower count: the window starts afresh.
  rate.add(40_000, 1_000)
  assert.equal(rate.perSecond(), 0)
  rate.add(41_000, 3_001_000)
  assert.equal(rate.perSecond(), 3_000_000)
})

test('the line tells a share and time left only when the total is known and a rate is', () => {
  const state = { filesDone: 1, filesTotal: 3, records: 12_345, bytesDone: 25e6, bytesTotal: 100e6 }
  assert.equal(render(state, 5e6), '██████░░░░░░░░░░░░░░░░░░  25% files 1/3 · 12,345 records · 25.0 MB/100.0 MB · 5.0 MB/s · 15s left')
  assert.equal(render(state, 0), '██████░░░░░░░░░░░░░░░░░░  25% files 1/3 · 12,345 records · 25.0 MB/100.0 MB · 0.0 MB/s')
  assert.equal(render({ ...state, bytesDone: 100e6 }, 5e6), '████████████████████████ 100% files 1/3 · 12,345 records · 100.0 MB/100.0 MB · 5.0 MB/s · 0s left')
  // Standard input or a pipe among the inputs: no total to share out.
  assert.equal(render({ ...state, bytesTotal: undefined }, 5e6), 'files 1/3 · 12,345 records · 25.0 MB · 5.0 MB/s')
})
