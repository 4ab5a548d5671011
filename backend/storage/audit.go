package storage

import (
	"bytes"
	"cmp"
	"errors"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/ttmcp/ttmcp/backend/domain"
)

// The audit log is a JSON Lines file per month (UTC) under the data root:
//
//	<data-root>/_tauritavern/mcp/audit/2026-11.jsonl      the month's active file
//	<data-root>/_tauritavern/mcp/audit/2026-11.1.jsonl    sealed when the active file was full
//	<data-root>/_tauritavern/mcp/audit/2026-11.2.jsonl    (higher numbers are newer)
//
// Each record is one line, written with one write(2) on a file opened with
// O_APPEND and then synced, so a crash leaves either the whole line or, at
// worst (a power loss mid-write), a torn last line. Readers skip a last
// line without its newline and any line that is not a record; before its
// first write to a file whose last byte is not a newline, the writer ends
// that torn line, so a new record never runs on from it.
//
// When a record would take the active file past MaxFileBytes, the file is
// sealed (renamed to the next number of its month) and a new one begun.
// Whenever a new file is begun, the oldest files (sealed ones, and the
// active files of past months) are removed until all the files together,
// with room for the new one to fill up, fit in MaxTotalBytes.
//
// One backend writes a data root's audit log at a time: appends from
// several processes would not tear lines (O_APPEND), but their rotations
// could race.

// auditVersion is the "v" of every record line.
const auditVersion = 1

// Default audit log limits.
const (
	DefaultAuditFileBytes  = 4 << 20
	DefaultAuditTotalBytes = 64 << 20
)

// AuditOptions tune an AuditLog; zero values take the defaults.
type AuditOptions struct {
	MaxFileBytes  int64            // a file is sealed before it grows past this
	MaxTotalBytes int64            // sealed files are removed, oldest first, beyond this
	Now           func() time.Time // the clock (tests)
}

// AuditLog appends call records to the audit files and reads them back,
// newest first. It is safe for concurrent use.
type AuditLog struct {
	data      dataRoot
	dir       string
	fileBytes int64
	total     int64
	now       func() time.Time

	mu     sync.Mutex
	last   time.Time // the time of the newest record
	loaded bool      // last was read from the files
}

// OpenAuditLog returns the audit log of dataRoot. It touches nothing: the
// directory is created by the first append.
func OpenAuditLog(dataRoot string, opts AuditOptions) *AuditLog {
	d := newDataRoot(dataRoot)
	l := &AuditLog{
		data:      d,
		dir:       d.join("_tauritavern", "mcp", "audit"),
		fileBytes: cmp.Or(opts.MaxFileBytes, DefaultAuditFileBytes),
		total:     cmp.Or(opts.MaxTotalBytes, DefaultAuditTotalBytes),
		now:       opts.Now,
	}
	if l.now == nil {
		l.now = time.Now
	}
	return l
}

// Dir returns the directory of the audit files.
func (l *AuditLog) Dir() string { return l.dir }

// auditLine is the JSON form of a record.
type auditLine struct {
	V                 int     `json:"v"`
	Time              string  `json:"time"`
	CallID            string  `json:"callId"`
	Source            string  `json:"source"`
	RegistrationID    string  `json:"registrationId"`
	ServerDisplayName string  `json:"serverDisplayName"`
	NativeName        string  `json:"nativeName"`
	Permission        string  `json:"permission"`
	Approval          string  `json:"approval"`
	Outcome           string  `json:"outcome"`
	Code              string  `json:"code"`
	ResponseKind      string  `json:"responseKind"`
	IsError           bool    `json:"isError"`
	DurationMs        float64 `json:"durationMs"`
	ArgumentsBytes    int     `json:"argumentsBytes"`
	ArgumentsSHA256   string  `json:"argumentsSha256"`
	ResultID          string  `json:"resultId,omitempty"`
	// A resource read or prompt get (ttmcp's resources and prompts); a
	// line without kind is a tool call.
	Kind         string `json:"kind,omitempty"`
	URI          string `json:"uri,omitempty"`
	PromptName   string `json:"promptName,omitempty"`
	ContentBytes *int64 `json:"contentBytes,omitempty"`
	ContentCount *int   `json:"contentCount,omitempty"`
	// A call whose server asked the user (elicitation): its requests and
	// each question's mode and answer.
	Rounds       int            `json:"rounds,omitzero"`
	Elicitations []elicitRecord `json:"elicitations,omitzero"`
	// A call whose server reported progress: how many updates came and
	// the last message (a line without them is a call without progress,
	// byte for byte as before).
	ProgressUpdates int    `json:"progressUpdates,omitzero"`
	ProgressMessage string `json:"progressMessage,omitzero"`
	// AppTool: the App a source "app" request came from (issue 30).
	AppTool string `json:"appTool,omitzero"`
}

type elicitRecord struct {
	Mode   string `json:"mode"`
	Action string `json:"action"`
}

var lineOptions = json.JoinOptions(jsontext.EscapeForHTML(false), jsontext.EscapeForJS(false), json.Deterministic(true))

func encodeAuditLine(r domain.CallRecord) ([]byte, error) {
	a := auditLine{
		V:                 auditVersion,
		Time:              r.Time.UTC().Format(domain.AuditTimeLayout),
		CallID:            r.CallID,
		Source:            string(r.Source),
		RegistrationID:    string(r.RegistrationID),
		ServerDisplayName: r.ServerDisplayName,
		NativeName:        r.NativeName,
		Permission:        string(r.Permission),
		Approval:          string(r.Approval),
		Outcome:           string(r.Outcome),
		Code:              r.Code,
		ResponseKind:      r.ResponseKind,
		IsError:           r.IsError,
		DurationMs:        float64(r.Duration.Microseconds()) / 1000,
		ArgumentsBytes:    r.ArgumentsBytes,
		ArgumentsSHA256:   r.ArgumentsSHA256,
		ResultID:          string(r.ResultID),
		URI:               r.URI,
		PromptName:        r.PromptName,
		AppTool:           r.AppTool,
	}
	if r.Kind != domain.AuditToolCall {
		a.Kind = string(r.Kind) // a tool call's line stays as before kinds
	}
	if r.HasContent {
		a.ContentBytes, a.ContentCount = &r.ContentBytes, &r.ContentCount
	}
	a.Rounds = r.Rounds
	for _, e := range r.Elicitations {
		a.Elicitations = append(a.Elicitations, elicitRecord{Mode: e.Mode, Action: e.Action})
	}
	a.ProgressUpdates, a.ProgressMessage = r.ProgressUpdates, r.ProgressMessage
	b, err := json.Marshal(a, lineOptions)
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// decodeAuditLine decodes one line (without its newline); false when it is
// not a record of this version.
func decodeAuditLine(b []byte) (domain.CallRecord, bool) {
	var a auditLine
	if json.Unmarshal(b, &a) != nil || a.V != auditVersion {
		return domain.CallRecord{}, false
	}
	t, err := time.Parse(time.RFC3339Nano, a.Time)
	if err != nil {
		return domain.CallRecord{}, false
	}
	r := domain.CallRecord{
		Kind:              domain.AuditKind(a.Kind),
		Time:              t,
		CallID:            a.CallID,
		Source:            domain.CallSource(a.Source),
		RegistrationID:    domain.RegistrationID(a.RegistrationID),
		ServerDisplayName: a.ServerDisplayName,
		NativeName:        a.NativeName,
		Permission:        domain.Permission(a.Permission),
		Approval:          domain.Approval(a.Approval),
		Outcome:           domain.Outcome(a.Outcome),
		Code:              a.Code,
		ResponseKind:      a.ResponseKind,
		IsError:           a.IsError,
		Duration:          durationOf(a.DurationMs),
		ArgumentsBytes:    a.ArgumentsBytes,
		ArgumentsSHA256:   a.ArgumentsSHA256,
		ResultID:          domain.ResultID(a.ResultID),
		URI:               a.URI,
		PromptName:        a.PromptName,
		AppTool:           a.AppTool,
	}
	if a.ContentBytes != nil && a.ContentCount != nil {
		r.HasContent, r.ContentBytes, r.ContentCount = true, *a.ContentBytes, *a.ContentCount
	}
	r.Rounds = a.Rounds
	for _, e := range a.Elicitations {
		r.Elicitations = append(r.Elicitations, domain.ElicitRecord{Mode: e.Mode, Action: e.Action})
	}
	r.ProgressUpdates, r.ProgressMessage = a.ProgressUpdates, a.ProgressMessage
	return r, true
}

// Append writes r as the newest record and returns it with its time. The
// times of one log's records strictly increase in the order they are
// appended (equal clock readings are nudged by a nanosecond), so "before
// the time of a record" names exactly the records older than it.
func (l *AuditLog) Append(r domain.CallRecord) (domain.CallRecord, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.loaded {
		// After a restart, continue after the newest record on disk even if
		// the clock went back meanwhile.
		l.last, l.loaded = l.newestTime(), true
	}
	t := l.now().UTC()
	if !r.Time.IsZero() {
		t = r.Time.UTC() // when the outcome was known (written after the answer)
	}
	if !t.After(l.last) {
		t = l.last.Add(time.Nanosecond)
	}
	r.Time = t
	line, err := encodeAuditLine(r)
	if err != nil {
		return r, domain.Errorf(domain.KindInternal, "", "Failed to encode an audit record: %v", err)
	}
	if err := l.data.mkdirAll(l.dir, 0o755); err != nil {
		return r, ioError(err, "Failed to create %s: %v", l.dir, reason(err))
	}
	month := t.Format("2006-01")
	path := filepath.Join(l.dir, month+".jsonl")
	f, created, err := l.data.openAppend(path)
	if err != nil {
		return r, err
	}
	size, endsLine, err := fileEnd(f, path)
	if err != nil {
		f.Close()
		return r, err
	}
	if size > 0 && size+int64(len(line)) > l.fileBytes {
		f.Close()
		if err := l.seal(month, path); err != nil {
			return r, err
		}
		if f, created, err = l.data.openAppend(path); err != nil {
			return r, err
		}
		size, endsLine = 0, true
	}
	defer f.Close()
	if !endsLine {
		line = append([]byte{'\n'}, line...) // end the torn line first
	}
	if _, err := f.Write(line); err != nil {
		return r, ioError(err, "Failed to append to %s: %v", path, reason(err))
	}
	if err := f.Sync(); err != nil {
		return r, ioError(err, "Failed to sync %s: %v", path, reason(err))
	}
	if created {
		l.data.syncDir(l.dir)
		// A new file (a new month, or after sealing): make room for it.
		if err := l.prune(path); err != nil {
			return r, err
		}
	}
	l.last = t
	return r, nil
}

// openAppend opens path for appending (and reading its last byte),
// creating it; created reports whether it did.
// Like every file of the data root, it must be a regular file: a FIFO or a
// device there (hostile or damaged) is refused, opened without blocking.
//
// A symbolic link is refused even when it stays inside the data root: the
// list reads regular files only (files), so what went through a link could
// never be read back.
func (r dataRoot) openAppend(path string) (f *os.File, created bool, err error) {
	if fi, err := r.lstat(path); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		return nil, false, unreadable(path, "it is a symbolic link; audit files are never followed")
	}
	f, err = r.openFile(path, os.O_RDWR|os.O_APPEND, 0)
	if errors.Is(err, fs.ErrNotExist) {
		f, err = r.openFile(path, os.O_RDWR|os.O_APPEND|os.O_CREATE, fileMode)
		created = err == nil
	}
	if err != nil {
		return nil, false, ioError(err, "Failed to open %s: %v", path, reason(err))
	}
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		f.Close()
		if err != nil {
			return nil, false, ioError(err, "Failed to stat %s: %v", path, reason(err))
		}
		return nil, false, unreadable(path, "it is %s, not a regular file", describeMode(fi.Mode()))
	}
	return f, created, nil
}

// fileEnd returns the size of f and whether it is empty or ends with a
// newline.
func fileEnd(f *os.File, path string) (int64, bool, error) {
	fi, err := f.Stat()
	if err != nil {
		return 0, false, ioError(err, "Failed to stat %s: %v", path, reason(err))
	}
	if fi.Size() == 0 {
		return 0, true, nil
	}
	var last [1]byte
	if _, err := f.ReadAt(last[:], fi.Size()-1); err != nil {
		return 0, false, ioError(err, "Failed to read %s: %v", path, reason(err))
	}
	return fi.Size(), last[0] == '\n', nil
}

// seal renames the month's active file to the month's next sealed number.
func (l *AuditLog) seal(month, path string) error {
	files, err := l.files()
	if err != nil {
		return err
	}
	next := 1
	for _, f := range files {
		if f.month == month && f.seq >= next {
			next = f.seq + 1
		}
	}
	sealed := filepath.Join(l.dir, month+"."+strconv.Itoa(next)+".jsonl")
	if _, err := l.data.lstat(sealed); err == nil {
		return domain.Errorf(domain.KindInternal, "", "Failed to seal %s: %s exists", path, sealed)
	}
	if err := l.data.rename(path, sealed); err != nil {
		return ioError(err, "Failed to seal %s as %s: %v", path, sealed, reason(err))
	}
	l.data.syncDir(l.dir)
	return nil
}

// prune removes the oldest files, never current (the active file being
// written), until all of them together leave room for current to grow to
// the file size within the total size.
func (l *AuditLog) prune(current string) error {
	files, err := l.files()
	if err != nil {
		return err
	}
	var total int64
	for _, f := range files {
		total += f.size
	}
	removed := false
	for i := len(files) - 1; i >= 0 && total+l.fileBytes > l.total; i-- { // oldest last
		f := files[i]
		if f.path == current {
			continue
		}
		if err := l.data.remove(f.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return ioError(err, "Failed to remove %s: %v", f.path, reason(err))
		}
		total -= f.size
		removed = true
	}
	if removed {
		l.data.syncDir(l.dir)
	}
	return nil
}

// auditFileName matches "2026-11.jsonl" (seq 0, active) and "2026-11.3.jsonl".
var auditFileName = regexp.MustCompile(`^(\d{4}-\d{2})(?:\.([1-9]\d{0,8}))?\.jsonl$`)

type auditFile struct {
	path  string
	month string
	seq   int // 0: the month's active file, the newest of its month
	size  int64
}

// files lists the audit files newest first: by month, then the active file,
// then the sealed ones from the highest number down. Other entries are
// ignored.
func (l *AuditLog) files() ([]auditFile, error) {
	entries, err := l.data.readDir(l.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, ioError(err, "Failed to read directory %s: %v", l.dir, reason(err))
	}
	var out []auditFile
	for _, e := range entries {
		m := auditFileName.FindStringSubmatch(e.Name())
		if m == nil || !e.Type().IsRegular() {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue // removed since listed
		}
		seq, _ := strconv.Atoi(m[2])
		out = append(out, auditFile{path: filepath.Join(l.dir, e.Name()), month: m[1], seq: seq, size: info.Size()})
	}
	slices.SortFunc(out, func(a, b auditFile) int {
		if c := cmp.Compare(b.month, a.month); c != 0 {
			return c
		}
		if a.seq == 0 || b.seq == 0 {
			return cmp.Compare(a.seq, b.seq) // the active file first
		}
		return cmp.Compare(b.seq, a.seq)
	})
	return out, nil
}

// List returns the records q selects, newest first. It reads the files as
// they were when it began (a record appended meanwhile may be left out),
// from their ends, and stops at the limit. Lines that are not records (a
// torn last line, damage) are skipped; skipped counts them.
func (l *AuditLog) List(q domain.AuditQuery) (records []domain.CallRecord, skipped int, err error) {
	// Open every file under the lock, so a concurrent rotation cannot move
	// a file between listing and opening it; an open file keeps its bytes.
	l.mu.Lock()
	open, err := l.openFiles()
	l.mu.Unlock()
	defer closeAll(open)
	if err != nil {
		return nil, 0, err
	}
	records = []domain.CallRecord{}
	budget := l.readBudget()
	for _, o := range open {
		if len(records) >= q.Limit {
			break
		}
		start, unread := l.readRange(o.size, &budget)
		if unread {
			skipped++ // what lies before start (or the whole file) is not read
		}
		if start == o.size {
			continue
		}
		err := scanLinesBackward(o.f, start, o.size, MaxAuditLineBytes, func(line []byte) bool {
			r, ok := decodeAuditLine(line)
			switch {
			case !ok:
				skipped++
			case q.RegistrationID != "" && r.RegistrationID != q.RegistrationID:
			case !q.Before.IsZero() && !r.Time.Before(q.Before):
			default:
				records = append(records, r)
			}
			return len(records) < q.Limit
		})
		if err != nil {
			return nil, 0, ioError(err, "Failed to read %s: %v", o.f.Name(), reason(err))
		}
	}
	return records, skipped, nil
}

// readBudget is how many bytes one List reads at most, over all files:
// the log's whole size and a file more. Files the log wrote stay within
// it (pruning keeps them under MaxTotalBytes); what another program put
// there beyond it is not read, so a List takes bounded time however large
// the files are.
func (l *AuditLog) readBudget() int64 { return l.total + 2*l.fileBytes }

// readRange returns where reading a file of size bytes starts: only its
// last 2 × MaxFileBytes (a file the log wrote is sealed before it is
// larger), and no more than the budget left, which it takes. unread says
// that a part of the file is left unread.
func (l *AuditLog) readRange(size int64, budget *int64) (start int64, unread bool) {
	n := min(size, 2*l.fileBytes, max(*budget, 0))
	*budget -= n
	return size - n, n < size
}

// openedFile is an audit file open for reading, with its size when opened.
type openedFile struct {
	f    *os.File
	size int64
}

// openFiles opens the audit files, newest first. The caller holds l.mu
// and closes them (also on error).
func (l *AuditLog) openFiles() ([]openedFile, error) {
	files, err := l.files()
	if err != nil {
		return nil, err
	}
	var open []openedFile
	for _, af := range files {
		f, err := l.data.openFile(af.path, os.O_RDONLY, 0) // listed as a regular file, but it may have been swapped for a FIFO since
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return open, ioError(err, "Failed to open %s: %v", af.path, reason(err))
		}
		fi, err := f.Stat()
		if err != nil {
			f.Close()
			return open, ioError(err, "Failed to stat %s: %v", af.path, reason(err))
		}
		if !fi.Mode().IsRegular() {
			f.Close()
			continue // as if it had not been listed
		}
		open = append(open, openedFile{f, fi.Size()})
	}
	return open, nil
}

func closeAll(open []openedFile) {
	for _, o := range open {
		o.f.Close()
	}
}

// newestTime returns the time of the newest record on disk (zero if none).
// The caller holds l.mu.
func (l *AuditLog) newestTime() time.Time {
	open, err := l.openFiles()
	defer closeAll(open)
	if err != nil {
		return time.Time{}
	}
	var newest time.Time
	budget := l.readBudget()
	for _, o := range open {
		start, _ := l.readRange(o.size, &budget)
		scanLinesBackward(o.f, start, o.size, MaxAuditLineBytes, func(line []byte) bool {
			r, ok := decodeAuditLine(line)
			if ok {
				newest = r.Time
			}
			return !ok
		})
		if !newest.IsZero() {
			break
		}
	}
	return newest
}

// auditReadChunk is how much of a file List reads at a time, from its end.
const auditReadChunk = 64 << 10

// MaxAuditLineBytes bounds one audit line, read or written. A record is
// at most a few kilobytes (a 16 KiB URI at most, a bounded list of
// questions); a longer line in a file is skipped without being held
// (counted as one line that is not a record), and Append refuses a record
// that would be longer, since it could not be read back.
const MaxAuditLineBytes = 1 << 20

// scanLinesBackward calls fn with the complete lines of r's bytes from
// start to size, last line first, until fn returns false. A last line
// without its newline (torn) and empty lines are not lines. A line longer
// than maxLine is not held: fn gets nil for it. When start is not 0 the
// first line in the range may have begun before it: it is given as nil too
// (only a part of it was read).
//
// It reads one chunk at a time into one buffer and holds at most maxLine
// bytes of a line that spans chunks, so memory stays within a chunk and
// maxLine, and time within the range, whatever is in the file.
func scanLinesBackward(r io.ReaderAt, start, size int64, maxLine int, fn func(line []byte) bool) error {
	buf := make([]byte, auditReadChunk)
	// The end of a line whose beginning lies before pos is kept at the end
	// of spill (spill[cs:]), so that what comes before it is prepended in
	// place; spill grows by doubling, up to maxLine.
	var spill []byte
	cs := 0
	overlong := false // the line being carried is longer than maxLine
	atEnd := true     // no newline seen yet: what is read is the torn tail
	prepend := func(b []byte) bool {
		if len(b) > cs {
			kept := len(spill) - cs
			if kept+len(b) > maxLine {
				return false
			}
			grown := make([]byte, min(maxLine, max(2*len(spill), kept+len(b), 4<<10)))
			ncs := len(grown) - kept
			copy(grown[ncs:], spill[cs:])
			spill, cs = grown, ncs
		}
		cs -= len(b)
		copy(spill[cs:], b)
		return true
	}
	emit := func(head []byte) bool {
		carried := len(spill) - cs
		had := len(head) > 0 || carried > 0 || overlong
		line := head
		switch {
		case overlong || len(head)+carried > maxLine:
			line = nil
		case carried > 0:
			prepend(head)
			line = spill[cs:]
		}
		cs, overlong = len(spill), false
		return !had || fn(line)
	}
	if start > 0 {
		start-- // the byte before says whether the range begins with a line
	}
	pos := size
	for pos > start {
		n := min(int64(auditReadChunk), pos-start)
		pos -= n
		chunk := buf[:n]
		if _, err := r.ReadAt(chunk, pos); err != nil && !errors.Is(err, io.EOF) {
			return err
		}
		end := len(chunk)
		if atEnd {
			// Whatever follows the file's last newline is a torn line.
			i := bytes.LastIndexByte(chunk, '\n')
			if i < 0 {
				continue // still in the torn tail: nothing of it is kept
			}
			atEnd, end = false, i
		}
		for {
			i := bytes.LastIndexByte(chunk[:end], '\n')
			if i < 0 {
				break
			}
			if !emit(chunk[i+1 : end]) {
				return nil
			}
			end = i
		}
		if !overlong && !prepend(chunk[:end]) {
			cs, overlong = len(spill), true
		}
	}
	if atEnd {
		return nil
	}
	if start > 0 { // the first line may have begun before start: only a part was read
		if len(spill) > cs || overlong {
			fn(nil)
		}
		return nil
	}
	emit(nil) // the file's first line
	return nil
}

// durationOf reads a line's durationMs back to the microsecond it was
// written with: 2.01 ms times 1e6 is 2009999.99… ns in floating point, so
// truncating would read 2.009 back.
func durationOf(ms float64) time.Duration {
	return time.Duration(math.Round(ms*1000)) * time.Microsecond
}
