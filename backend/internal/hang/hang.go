// Package hang detects operations that block: tests of hostile input
// (a FIFO, a peer that stops reading) must fail, not hang the suite.
package hang

import (
	"testing"
	"time"
)

// Within runs fn and returns its result, or fails tb if fn has not
// returned after d. d is a hang detector, far above what fn takes; it is
// not a timing assertion. A blocked fn's goroutine is left behind.
func Within[T any](tb testing.TB, what string, d time.Duration, fn func() T) T {
	tb.Helper()
	done := make(chan T, 1)
	go func() { done <- fn() }()
	select {
	case v := <-done:
		return v
	case <-time.After(d):
		tb.Fatalf("%s did not return within %v: it blocks", what, d)
		panic("unreachable")
	}
}
