package storage

import (
	"bytes"
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ttmcp/ttmcp/backend/domain"
)

// clock is a settable clock for an AuditLog.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) set(t time.Time) {
	c.mu.Lock()
	c.t = t
	c.mu.Unlock()
}

const (
	regA = domain.RegistrationID("550e8400-e29b-41d4-a716-446655440000")
	regB = domain.RegistrationID("6ba7b810-9dad-41d1-80b4-00c04fd430c8")
)

func record(id string, reg domain.RegistrationID) domain.CallRecord {
	n, sum := domain.DigestArguments(`{"text":"` + id + `"}`)
	return domain.CallRecord{
		CallID: id, Source: domain.SourceModel, RegistrationID: reg, ServerDisplayName: "Demo", NativeName: "echo",
		Permission: domain.PermissionAsk, Approval: domain.ApprovalOnce, Outcome: domain.OutcomeKnownResponse,
		ResponseKind: "tool_result", Duration: 1500 * time.Microsecond, ArgumentsBytes: n, ArgumentsSHA256: sum,
	}
}

func appendAll(t *testing.T, l *AuditLog, recs ...domain.CallRecord) {
	t.Helper()
	for _, r := range recs {
		if _, err := l.Append(r); err != nil {
			t.Fatalf("append %s: %v", r.CallID, err)
		}
	}
}

func list(t *testing.T, l *AuditLog, q domain.AuditQuery) ([]string, int) {
	t.Helper()
	if q.Limit == 0 {
		q.Limit = 1000
	}
	recs, skipped, err := l.List(q)
	if err != nil {
		t.Fatalf("list: %v", err)
	}
	ids := []string{}
	for _, r := range recs {
		ids = append(ids, r.CallID)
	}
	return ids, skipped
}

// A record survives the round trip through its line, which holds the
// argument digest and never the arguments.
func TestAuditLineRoundTrip(t *testing.T) {
	c := &clock{t: time.Date(2026, 11, 30, 12, 0, 0, 123456789, time.UTC)}
	l := OpenAuditLog(t.TempDir(), AuditOptions{Now: c.now})
	in := record("call-1", regA)
	in.ServerDisplayName = "Démo \"quoted\" <b>"
	out, err := l.Append(in)
	if err != nil {
		t.Fatal(err)
	}
	if !out.Time.Equal(c.t) {
		t.Errorf("time %v; want %v", out.Time, c.t)
	}
	data, err := os.ReadFile(filepath.Join(l.Dir(), "2026-11.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"v":1,"time":"2026-11-30T12:00:00.123456789Z","callId":"call-1","source":"model",` +
		`"registrationId":"550e8400-e29b-41d4-a716-446655440000","serverDisplayName":"Démo \"quoted\" <b>","nativeName":"echo",` +
		`"permission":"ask","approval":"once","outcome":"known_response","code":"","responseKind":"tool_result","isError":false,` +
		`"durationMs":1.5,"argumentsBytes":17,"argumentsSha256":"` + in.ArgumentsSHA256 + `"}` + "\n"
	if string(data) != want {
		t.Errorf("file:\n%s\nwant:\n%s", data, want)
	}
	if strings.Contains(string(data), "call-1\"}") {
		t.Error("the arguments reached the file")
	}
	recs, _, err := l.List(domain.AuditQuery{Limit: 10})
	if err != nil || len(recs) != 1 {
		t.Fatalf("list: %v %v", recs, err)
	}
	got := recs[0]
	in.Time = c.t
	if !reflect.DeepEqual(got, in) {
		t.Errorf("read back %+v\nwant %+v", got, in)
	}
	if fi, _ := os.Stat(filepath.Join(l.Dir(), "2026-11.jsonl")); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v; want 0600", fi.Mode().Perm())
	}
}

// A duration reads back as the microseconds it was written with, for
// values whose milliseconds are not exact in floating point.
func TestAuditDurationRoundTrip(t *testing.T) {
	l := OpenAuditLog(t.TempDir(), AuditOptions{})
	for _, us := range []int64{0, 1, 999, 1500, 2010, 2009, 4100, 123457, 987654321} {
		in := record("call-"+strconv.FormatInt(us, 10), regA)
		in.Duration = time.Duration(us) * time.Microsecond
		if _, err := l.Append(in); err != nil {
			t.Fatal(err)
		}
		recs, _, err := l.List(domain.AuditQuery{Limit: 1})
		if err != nil || len(recs) != 1 {
			t.Fatalf("list: %v %v", recs, err)
		}
		if recs[0].Duration != in.Duration {
			t.Errorf("%d µs read back as %v", us, recs[0].Duration)
		}
	}
}

// A resource read and a prompt get keep their kind, their URI or prompt
// name and the sizes of what came back, and a tool call's line is as it
// was before kinds.
func TestAuditKindsRoundTrip(t *testing.T) {
	c := &clock{t: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)}
	l := OpenAuditLog(t.TempDir(), AuditOptions{Now: c.now})
	read := record("read-1", regA)
	read.Kind, read.Source, read.NativeName, read.URI = domain.AuditResourceRead, domain.SourcePage, "", "test://static/resource/1"
	read.HasContent, read.ContentBytes, read.ContentCount = true, 0, 2 // zero bytes is still recorded
	get := record("get-1", regA)
	get.Kind, get.Source, get.NativeName, get.PromptName = domain.AuditPromptGet, domain.SourcePage, "", "summarize"
	call := record("call-1", regA)
	call.Kind = domain.AuditToolCall
	appendAll(t, l, read, get, call)
	data, err := os.ReadFile(filepath.Join(l.Dir(), "2026-11.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	if len(lines) != 3 || !strings.Contains(lines[0], `"kind":"resource_read","uri":"test://static/resource/1","contentBytes":0,"contentCount":2}`) ||
		!strings.Contains(lines[1], `"kind":"prompt_get","promptName":"summarize"}`) || strings.Contains(lines[2], "kind") {
		t.Fatalf("lines:\n%s", data)
	}
	recs, _, err := l.List(domain.AuditQuery{Limit: 10})
	if err != nil || len(recs) != 3 {
		t.Fatalf("list: %v %v", recs, err)
	}
	call.Kind = "" // read back as written: a line without a kind
	for i, want := range []domain.CallRecord{call, get, read} {
		want.Time = recs[i].Time
		if !reflect.DeepEqual(recs[i], want) {
			t.Errorf("read back %+v\nwant %+v", recs[i], want)
		}
	}
}

// A call whose server reported progress keeps the count and the last
// message at the end of its line and reads them back; the line of a call
// without progress is as before (TestAuditLineRoundTrip).
func TestAuditProgressRoundTrip(t *testing.T) {
	c := &clock{t: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)}
	l := OpenAuditLog(t.TempDir(), AuditOptions{Now: c.now})
	in := record("steps-1", regA)
	in.ProgressUpdates, in.ProgressMessage = 5, "step 5 of 5"
	appendAll(t, l, in)
	data, err := os.ReadFile(filepath.Join(l.Dir(), "2026-11.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(string(data), `,"progressUpdates":5,"progressMessage":"step 5 of 5"}`+"\n") {
		t.Fatalf("line %s", data)
	}
	recs, _, err := l.List(domain.AuditQuery{Limit: 1})
	if err != nil || len(recs) != 1 {
		t.Fatalf("list: %v %v", recs, err)
	}
	in.Time = recs[0].Time
	if !reflect.DeepEqual(recs[0], in) {
		t.Errorf("read back %+v\nwant %+v", recs[0], in)
	}
}

// Newest first, across months; filtered by registration; paged with
// before (the time of the last record seen) and limit. Equal clock
// readings still give strictly increasing times.
func TestAuditListNewestFirst(t *testing.T) {
	c := &clock{t: time.Date(2026, 10, 31, 23, 59, 59, 0, time.UTC)}
	l := OpenAuditLog(t.TempDir(), AuditOptions{Now: c.now})
	appendAll(t, l, record("a1", regA), record("b1", regB), record("a2", regA)) // same reading
	c.set(time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC))
	appendAll(t, l, record("b2", regB), record("a3", regA))
	if got := mustReadDirNames(t, l.Dir()); !slices.Equal(got, []string{"2026-10.jsonl", "2026-11.jsonl"}) {
		t.Errorf("files %v", got)
	}
	if ids, _ := list(t, l, domain.AuditQuery{}); !slices.Equal(ids, []string{"a3", "b2", "a2", "b1", "a1"}) {
		t.Errorf("newest first: %v", ids)
	}
	if ids, _ := list(t, l, domain.AuditQuery{RegistrationID: regA}); !slices.Equal(ids, []string{"a3", "a2", "a1"}) {
		t.Errorf("registration A: %v", ids)
	}
	recs, _, _ := l.List(domain.AuditQuery{Limit: 2})
	if len(recs) != 2 || recs[1].CallID != "b2" {
		t.Fatalf("first page %+v", recs)
	}
	if ids, _ := list(t, l, domain.AuditQuery{Before: recs[1].Time, Limit: 2}); !slices.Equal(ids, []string{"a2", "b1"}) {
		t.Errorf("second page %v", ids)
	}
	all, _, _ := l.List(domain.AuditQuery{Limit: 10})
	for i := 1; i < len(all); i++ {
		if !all[i].Time.Before(all[i-1].Time) {
			t.Errorf("times not strictly decreasing: %v then %v", all[i-1].Time, all[i].Time)
		}
	}

	// A new log over the same files (a restart) with a clock that went back
	// continues after the newest record.
	c.set(time.Date(2026, 9, 1, 0, 0, 0, 0, time.UTC))
	again := OpenAuditLog(filepath.Dir(filepath.Dir(filepath.Dir(l.Dir()))), AuditOptions{Now: c.now})
	r, err := again.Append(record("late", regA))
	if err != nil {
		t.Fatal(err)
	}
	if !r.Time.After(all[0].Time) {
		t.Errorf("after a restart with the clock back: %v, not after %v", r.Time, all[0].Time)
	}
	if ids, _ := list(t, again, domain.AuditQuery{Limit: 2}); !slices.Equal(ids, []string{"late", "a3"}) {
		t.Errorf("after restart %v", ids)
	}
}

// A file is sealed before a record would take it past MaxFileBytes; the
// oldest sealed files go beyond MaxTotalBytes; reading crosses the files.
func TestAuditRotation(t *testing.T) {
	c := &clock{t: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)}
	probe, _ := encodeAuditLine(record("r00", regA))
	lineLen := int64(len(probe))
	l := OpenAuditLog(t.TempDir(), AuditOptions{Now: c.now, MaxFileBytes: 3 * lineLen, MaxTotalBytes: 10 * lineLen})
	for i := range 20 {
		appendAll(t, l, record(fmt.Sprintf("r%02d", i), regA))
	}
	// 20 lines of 3 per file: 6 sealed and 2 in the active file; at most
	// 10 lines in all, so only the newest sealed files stay.
	if got, want := mustReadDirNames(t, l.Dir()), []string{"2026-11.5.jsonl", "2026-11.6.jsonl", "2026-11.jsonl"}; !slices.Equal(got, want) {
		t.Errorf("files %v; want %v", got, want)
	}
	for _, name := range mustReadDirNames(t, l.Dir()) {
		fi, _ := os.Stat(filepath.Join(l.Dir(), name))
		if fi.Size() > 3*lineLen {
			t.Errorf("%s holds %d bytes, over the cap %d", name, fi.Size(), 3*lineLen)
		}
	}
	ids, _ := list(t, l, domain.AuditQuery{})
	if want := []string{"r19", "r18", "r17", "r16", "r15", "r14", "r13", "r12"}; !slices.Equal(ids, want) {
		t.Errorf("records %v; want %v", ids, want)
	}
	if ids, _ := list(t, l, domain.AuditQuery{Limit: 4}); !slices.Equal(ids, []string{"r19", "r18", "r17", "r16"}) {
		t.Errorf("limit 4 across files: %v", ids)
	}
	// A new month starts its own file; the old month's active file stays.
	c.set(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC))
	appendAll(t, l, record("dec", regA))
	if ids, _ := list(t, l, domain.AuditQuery{Limit: 3}); !slices.Equal(ids, []string{"dec", "r19", "r18"}) {
		t.Errorf("after the month changed: %v", ids)
	}
	if !slices.Contains(mustReadDirNames(t, l.Dir()), "2026-11.jsonl") {
		t.Error("the November file went")
	}
}

// A torn last line (a power loss mid-write) is skipped by readers, and the
// next record is written on a line of its own after it.
func TestAuditTornLastLine(t *testing.T) {
	c := &clock{t: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)}
	l := OpenAuditLog(t.TempDir(), AuditOptions{Now: c.now})
	appendAll(t, l, record("whole", regA))
	path := filepath.Join(l.Dir(), "2026-11.jsonl")
	line, _ := encodeAuditLine(record("torn", regA))
	f, _ := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	f.Write(line[:len(line)/2])
	f.Close()

	if ids, skipped := list(t, l, domain.AuditQuery{}); !slices.Equal(ids, []string{"whole"}) || skipped != 0 {
		t.Errorf("with a torn last line: %v (skipped %d); want whole", ids, skipped)
	}
	appendAll(t, l, record("after", regA))
	if ids, skipped := list(t, l, domain.AuditQuery{}); !slices.Equal(ids, []string{"after", "whole"}) || skipped != 1 {
		t.Errorf("after the next append: %v (skipped %d); want after, whole and the torn line skipped", ids, skipped)
	}
	data, _ := os.ReadFile(path)
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[2], `{"v":1,`) || !bytes.HasPrefix(line, []byte(lines[1])) {
		t.Errorf("file lines %q; want whole, the torn half, after", lines)
	}

	// A file of nothing but a torn line, and damage in the middle.
	os.WriteFile(path, []byte(`{"v":1,"ti`), 0o600)
	if ids, _ := list(t, l, domain.AuditQuery{}); len(ids) != 0 {
		t.Errorf("a lone torn line read as %v", ids)
	}
	os.WriteFile(path, []byte("not json\n"+string(line)+"{\"v\":2}\n\n"), 0o600)
	if ids, skipped := list(t, l, domain.AuditQuery{}); !slices.Equal(ids, []string{"torn"}) || skipped != 2 {
		t.Errorf("damaged file: %v (skipped %d); want torn, 2 skipped", ids, skipped)
	}
}

// Concurrent appends: every record is one whole line, exactly once, and
// file order is time order.
func TestAuditConcurrentAppends(t *testing.T) {
	probe, _ := encodeAuditLine(record("w0-000", regA))
	l := OpenAuditLog(t.TempDir(), AuditOptions{MaxFileBytes: 50 * int64(len(probe)), MaxTotalBytes: 1 << 30})
	const writers, each = 8, 40
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				if _, err := l.Append(record(fmt.Sprintf("w%d-%03d", w, i), regA)); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	// Readers meanwhile never see a broken line.
	done := make(chan struct{})
	var reads sync.WaitGroup
	reads.Go(func() {
		for {
			select {
			case <-done:
				return
			default:
			}
			if _, skipped, err := l.List(domain.AuditQuery{Limit: 1000}); err != nil || skipped != 0 {
				t.Errorf("concurrent list: skipped %d, %v", skipped, err)
				return
			}
		}
	})
	wg.Wait()
	close(done)
	reads.Wait()
	recs, skipped, err := l.List(domain.AuditQuery{Limit: 10000})
	if err != nil || skipped != 0 || len(recs) != writers*each {
		t.Fatalf("%d records, %d skipped, %v; want %d", len(recs), skipped, err, writers*each)
	}
	seen := map[string]bool{}
	last := map[int]int{}
	for i := len(recs) - 1; i >= 0; i-- { // oldest first
		r := recs[i]
		if seen[r.CallID] {
			t.Errorf("%s twice", r.CallID)
		}
		seen[r.CallID] = true
		var w, n int
		fmt.Sscanf(r.CallID, "w%d-%d", &w, &n)
		if prev, ok := last[w]; ok && n != prev+1 {
			t.Errorf("writer %d: %d after %d", w, n, prev)
		}
		last[w] = n
		if i > 0 && !recs[i-1].Time.After(r.Time) {
			t.Errorf("time order broken at %s", r.CallID)
		}
	}
	if len(mustReadDirNames(t, l.Dir())) < 2 {
		t.Error("expected the appends to rotate")
	}
}

// Lines longer than a read chunk, read backward; a line longer than the
// most a line may be is given as nil ("<long>" here), not held, and so is
// the first line of a range that starts inside the file.
func TestScanLinesBackward(t *testing.T) {
	long := strings.Repeat("x", auditReadChunk*2+17)
	for _, tc := range []struct {
		text    string
		want    []string
		maxLine int // 0: no limit
		start   int64
	}{
		{"", nil, 0, 0},
		{"a\n", []string{"a"}, 0, 0},
		{"a\nb\n", []string{"b", "a"}, 0, 0},
		{"a\nb", []string{"a"}, 0, 0},
		{"a\n\n\nb\n", []string{"b", "a"}, 0, 0},
		{long + "\nb\n" + long + "\n", []string{long, "b", long}, 0, 0},
		{"a\n" + long, []string{"a"}, 0, 0},
		{long, nil, 0, 0},
		{"abcd\nab\nabc\n", []string{"abc", "ab", "<long>"}, 3, 0},
		{long + "\nb\n" + long + "\n", []string{"<long>", "b", "<long>"}, 100, 0},
		{"a\n" + long + "\nb\n", []string{"b", "<long>", "a"}, auditReadChunk, 0},
		{"first\nsecond\nthird\n", []string{"third", "second", "<long>"}, 0, 3}, // "st" of first
		{"first\nsecond\nthird\n", []string{"third", "second"}, 0, 6},           // starts at a line
		{long + "\nb\n", []string{"b", "<long>"}, 0, 5},
	} {
		var got []string
		maxLine := cmp.Or(tc.maxLine, 1<<30)
		if err := scanLinesBackward(strings.NewReader(tc.text), tc.start, int64(len(tc.text)), maxLine, func(line []byte) bool {
			if line == nil {
				got = append(got, "<long>")
			} else {
				got = append(got, string(line))
			}
			return true
		}); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%.20q: %d lines %.40q; want %.40q", tc.text, len(got), got, tc.want)
		}
	}
}
