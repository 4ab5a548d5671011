// Package benchpair runs a benchmark next to its baseline: both run
// alternately in every iteration, so their ratio comes from one run on one
// machine under the same load (`make bench` prints it).
package benchpair

import (
	"testing"
	"time"
)

// Run times ours and baseline alternately and reports ms per op of each
// and their ratio, under the unit "x-"+name.
func Run(b *testing.B, name string, ours, baseline func() error) {
	b.Helper()
	var tOurs, tBase time.Duration
	for b.Loop() {
		start := time.Now()
		if err := baseline(); err != nil {
			b.Fatal(err)
		}
		tBase += time.Since(start)
		start = time.Now()
		if err := ours(); err != nil {
			b.Fatal(err)
		}
		tOurs += time.Since(start)
	}
	n := float64(b.N)
	b.ReportMetric(float64(tOurs.Microseconds())/n/1000, "ms/ttmcp")
	b.ReportMetric(float64(tBase.Microseconds())/n/1000, "ms/"+name)
	b.ReportMetric(float64(tOurs)/float64(tBase), "x-"+name)
}
