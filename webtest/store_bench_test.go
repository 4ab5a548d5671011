package webtest

import (
	"fmt"
	"testing"
)

// BenchmarkBlobRoundTrip: a 1 MiB blob through api.extension.store
// (setBlob, then getBlob until its bytes are in hand) against the
// plain-JavaScript client sending the same two commands with the same
// base64 conversions, interleaved, 9 reps; medians.
func BenchmarkBlobRoundTrip(b *testing.B) {
	_, p := benchPage(b)
	const size, reps = 1 << 20, 9
	r := evalJS[struct{ BridgeSet, BridgeGet, PlainSet, PlainGet []float64 }](p, `return await tt.bench.blobs(%s, %s);`, reps, size)
	bs, bg, ps, pg := median(r.BridgeSet), median(r.BridgeGet), median(r.PlainSet), median(r.PlainGet)
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(bs+bg, "bridge-ms")
	b.ReportMetric(ps+pg, "plain-ms")
	b.ReportMetric((bs+bg)/(ps+pg), "bridge/plain")
	addBenchRow(benchRow{
		measure:   fmt.Sprintf("1 MiB blob setBlob + getBlob (%d reps)", reps),
		bridge:    fmt.Sprintf("%.1f ms (set %.1f, get %.1f)", bs+bg, bs, bg),
		plain:     fmt.Sprintf("%.1f ms (set %.1f, get %.1f) plain JS", ps+pg, ps, pg),
		ratio:     fmt.Sprintf("%.2f×", (bs+bg)/(ps+pg)),
		prototype: "–",
	})
}
