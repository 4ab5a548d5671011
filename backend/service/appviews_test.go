package service

import (
	"strings"
	"testing"
	"time"
)

// App views are single use, expire, and stay within their bounds however
// many a page mints without loading them.
func TestAppViews(t *testing.T) {
	now := time.Unix(1_000_000, 0)
	var v appViews
	id := v.put(AppView{HTML: "<p>a</p>", CSP: "default-src 'none'"}, now)
	if len(id) != 32 {
		t.Fatalf("id %q", id)
	}
	if got, ok := v.take(id, now); !ok || got.HTML != "<p>a</p>" {
		t.Fatalf("take %+v %v", got, ok)
	}
	if _, ok := v.take(id, now); ok {
		t.Fatal("a view was served twice")
	}
	late := v.put(AppView{HTML: "x"}, now)
	if _, ok := v.take(late, now.Add(appViewTTL)); ok {
		t.Fatal("an expired view was served")
	}
	tests := []struct {
		name  string
		n     int
		size  int
		views int // at most, after the puts
	}{
		{"count", maxAppViews * 3, 10, maxAppViews},
		{"bytes", 40, 2 << 20, maxAppViewsBytes / (2 << 20)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var v appViews
			var last string
			for i := 0; i < tt.n; i++ {
				last = v.put(AppView{HTML: strings.Repeat("x", tt.size)}, now)
			}
			if len(v.byID) > tt.views || len(v.order) != len(v.byID) || v.bytes > maxAppViewsBytes {
				t.Fatalf("%d views, %d bytes", len(v.byID), v.bytes)
			}
			if _, ok := v.take(last, now); !ok {
				t.Fatal("the newest view was evicted")
			}
		})
	}
}
