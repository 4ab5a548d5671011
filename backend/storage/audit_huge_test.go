package storage

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/ttmcp/ttmcp/backend/domain"
	"github.com/ttmcp/ttmcp/backend/internal/benchpair"
	"github.com/ttmcp/ttmcp/backend/internal/hang"
)

// auditNow is the clock of auditAt's log: May 2026.
var auditNow = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)

func auditAt(root string) *AuditLog {
	return OpenAuditLog(root, AuditOptions{Now: func() time.Time { return auditNow }})
}

// hugeAuditFile makes this month's audit file size bytes long: a sparse
// head of zero bytes (one endless line, costing no disk) and then tail
// records of reg, so a List must read through the head to find older
// records. It returns the log.
func hugeAuditFile(tb testing.TB, root string, size int64, tail int) *AuditLog {
	tb.Helper()
	l := auditAt(root)
	var lines bytes.Buffer
	lines.WriteByte('\n') // ends the zeros' "line"
	for i := range tail {
		r := record(fmt.Sprint("call-", i), regA)
		r.Time = auditNow.Add(time.Duration(i) * time.Millisecond)
		line, err := encodeAuditLine(r)
		if err != nil {
			tb.Fatal(err)
		}
		lines.Write(line)
	}
	if err := os.MkdirAll(l.Dir(), 0o755); err != nil {
		tb.Fatal(err)
	}
	f, err := os.Create(filepath.Join(l.Dir(), "2026-05.jsonl"))
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt(lines.Bytes(), max(size-int64(lines.Len()), 0)); err != nil {
		tb.Fatal(err)
	}
	return l
}

// Issue 27 item 3: a 100 MB audit month file is read in bounded memory and
// time: the newest records come back, a query that matches nothing ends
// (it stalled for more than 15 s and took 312 MB before), and the part not
// read is counted as skipped.
func TestAuditListOfAHugeFile(t *testing.T) {
	l := hugeAuditFile(t, t.TempDir(), 100<<20, 50)
	for _, q := range []domain.AuditQuery{
		{Limit: 10},
		{Limit: 100},
		{Limit: 10, RegistrationID: regB}, // matches nothing: reads all it may
	} {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		type list struct {
			n, skipped int
			err        error
		}
		got := hang.Within(t, "List of a 100 MB file", 10*time.Second, func() list {
			recs, skipped, err := l.List(q)
			return list{len(recs), skipped, err}
		})
		runtime.ReadMemStats(&after)
		want := min(q.Limit, 50)
		if q.RegistrationID != "" {
			want = 0
		}
		if got.err != nil || got.n != want {
			t.Errorf("List(%+v) = %d records, %v; want %d", q, got.n, got.err, want)
		}
		if q.Limit > 50 && got.skipped == 0 {
			t.Errorf("List(%+v): the unread head is not counted as skipped", q)
		}
		if grew := after.TotalAlloc - before.TotalAlloc; grew > 16<<20 {
			t.Errorf("List(%+v) allocated %d MB", q, grew>>20)
		}
	}
	// The writer carries on after it (the file is sealed: it is full).
	if _, err := l.Append(record("next", regA)); err != nil {
		t.Fatal(err)
	}
	if ids, _ := list(t, l, domain.AuditQuery{Limit: 1}); len(ids) != 1 || ids[0] != "next" {
		t.Errorf("after the append: %v", ids)
	}
}

// BenchmarkAuditListGrowth: listing a huge audit file costs what listing a
// small one does, whatever its size. Each size is paired with a 1 MiB file
// of records (the baseline, same run); the query matches nothing, so both
// read all they may. x-small (time) and x-mem (bytes allocated) stay flat
// from 16 MiB to 1 GiB.
func BenchmarkAuditListGrowth(b *testing.B) {
	small := hugeAuditFile(b, b.TempDir(), 1<<20, 5000)
	q := domain.AuditQuery{Limit: 10, RegistrationID: regB}
	for _, size := range []int64{16 << 20, 128 << 20, 1 << 30} {
		b.Run(fmt.Sprintf("%dMiB", size>>20), func(b *testing.B) {
			big := hugeAuditFile(b, b.TempDir(), size, 5000)
			var allocBig, allocSmall uint64
			measure := func(l *AuditLog, into *uint64) func() error {
				return func() error {
					var before, after runtime.MemStats
					runtime.ReadMemStats(&before)
					_, _, err := l.List(q)
					runtime.ReadMemStats(&after)
					*into += after.TotalAlloc - before.TotalAlloc
					return err
				}
			}
			benchpair.Run(b, "small", measure(big, &allocBig), measure(small, &allocSmall))
			b.ReportMetric(float64(allocBig)/float64(allocSmall), "x-mem")
		})
	}
}
