// Package heappeak measures how far a process's live heap rises while
// something runs (benchmarks: a flood of progress, issue 29).
package heappeak

import (
	"runtime"
	"runtime/metrics"
	"time"
)

// Watch collects garbage, then samples the live heap (the heap the last
// GC marked live, /gc/heap/live:bytes) every period until the returned
// stop, which returns the level before and the peak, in MiB.
func Watch(period time.Duration) (stop func() (beforeMiB, peakMiB float64)) {
	runtime.GC()
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	live := func() uint64 {
		metrics.Read(sample)
		return sample[0].Value.Uint64()
	}
	before := live()
	peak := before
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(period)
		defer t.Stop()
		for {
			select {
			case <-quit:
				return
			case <-t.C:
				peak = max(peak, live())
			}
		}
	}()
	return func() (float64, float64) {
		close(quit)
		<-done
		peak = max(peak, live())
		mib := func(v uint64) float64 { return float64(v) / (1 << 20) }
		return mib(before), mib(peak)
	}
}
