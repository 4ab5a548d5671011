// Package benchpair runs a benchmark next to its baseline: both run
// alternately in every iteration, so their ratio comes from one run on one
// machine under the same load (`make bench` prints it).
package benchpair

import (
	"maps"
	"slices"
	"testing"
	"time"
)

// Run times ours and baseline alternately and reports ms per op of each
// and their ratio, under the unit "x-"+name.
func Run(b *testing.B, name string, ours, baseline func() error) {
	b.Helper()
	RunSides(b, name, Side{Op: ours}, Side{Op: baseline}, nil)
}

// Side is one side of a pair.
type Side struct {
	Op func() error // what is timed
	// Settle, when set, runs after every Op, untimed: waiting for work the
	// Op left in the background, or dropping pooled connections so the
	// next Op starts cold.
	Settle func()
}

// Counter reads a cumulative count (e.g. round trips on a link).
type Counter func() int

// RunSides is Run with per-side settling and counters: for every counter
// it also reports the increase per Op of each side ("<counter>/ttmcp",
// "<counter>/<name>"), and, when Settle added to a count,
// "<counter>-settle/ttmcp" (what ran in the background after the Op).
// Each side runs alone, so the counts are its own.
func RunSides(b *testing.B, name string, ours, baseline Side, counters map[string]Counter) {
	b.Helper()
	keys := slices.Sorted(maps.Keys(counters))
	read := func() []int {
		v := make([]int, len(keys))
		for i, k := range keys {
			v[i] = counters[k]()
		}
		return v
	}
	type tally struct {
		t          time.Duration
		op, settle []int
	}
	run := func(s Side, t *tally) {
		before := read()
		start := time.Now()
		if err := s.Op(); err != nil {
			b.Fatal(err)
		}
		t.t += time.Since(start)
		after := read()
		if s.Settle != nil {
			s.Settle()
		}
		settled := read()
		for i := range keys {
			t.op[i] += after[i] - before[i]
			t.settle[i] += settled[i] - after[i]
		}
	}
	o := tally{op: make([]int, len(keys)), settle: make([]int, len(keys))}
	base := tally{op: make([]int, len(keys)), settle: make([]int, len(keys))}
	for b.Loop() {
		run(baseline, &base)
		run(ours, &o)
	}
	n := float64(b.N)
	b.ReportMetric(float64(o.t.Microseconds())/n/1000, "ms/ttmcp")
	b.ReportMetric(float64(base.t.Microseconds())/n/1000, "ms/"+name)
	b.ReportMetric(float64(o.t)/float64(base.t), "x-"+name)
	for i, k := range keys {
		b.ReportMetric(float64(o.op[i])/n, k+"/ttmcp")
		b.ReportMetric(float64(base.op[i])/n, k+"/"+name)
		if o.settle[i] != 0 {
			b.ReportMetric(float64(o.settle[i])/n, k+"-settle/ttmcp")
		}
		if base.settle[i] != 0 {
			b.ReportMetric(float64(base.settle[i])/n, k+"-settle/"+name)
		}
	}
}
