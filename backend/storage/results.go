package storage

import (
	"cmp"
	"errors"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/ttmcp/ttmcp/backend/domain"
)

// The result store, ttmcp's own (SPEC §10 "Tool sets"): the model-readable
// text of tool results too long to include in a prompt, kept for the
// model's reader tool (ttmcp_read_result) and the user's Recent calls:
//
//	<data-root>/_tauritavern/mcp/results/<registration-uuid>/<result-uuid>.txt
//
// A result may hold anything a tool returned (a private page, a file), so
// the folders are 0700 and the files 0600. Each file is written atomically
// and never changed. Retention is bounded (docs/DECISIONS.md): a result
// older than MaxAge is gone, and when the results together pass
// MaxTotalBytes or MaxFiles the oldest go first; a server's results go
// with it (DeleteRegistration).
type ResultStore struct {
	data     dataRoot
	dir      string
	maxAge   time.Duration
	maxTotal int64
	maxFiles int
	now      func() time.Time

	mu sync.Mutex // one prune at a time
}

// Result store limits (docs/DECISIONS.md, "Tool sets").
const (
	DefaultResultMaxAge     = 7 * 24 * time.Hour
	DefaultResultTotalBytes = 128 << 20
	DefaultResultFiles      = 5000
	// MaxResultBytes bounds one result: a response body is at most 4 MiB,
	// and its readable text cannot be much longer.
	MaxResultBytes = 16 << 20
)

// CodeResultNotFound: no such result, or it expired.
const CodeResultNotFound = "mcp.result_not_found"

// ResultOptions tune a ResultStore; zero values take the defaults.
type ResultOptions struct {
	MaxAge        time.Duration
	MaxTotalBytes int64
	MaxFiles      int
	Now           func() time.Time // the clock (tests)
}

// OpenResultStore returns the result store of dataRoot. It touches
// nothing: the folders are made by the first Put.
func OpenResultStore(dataRoot string, opts ResultOptions) *ResultStore {
	d := newDataRoot(dataRoot)
	s := &ResultStore{
		data:     d,
		dir:      d.join("_tauritavern", "mcp", "results"),
		maxAge:   cmp.Or(opts.MaxAge, DefaultResultMaxAge),
		maxTotal: cmp.Or(opts.MaxTotalBytes, DefaultResultTotalBytes),
		maxFiles: cmp.Or(opts.MaxFiles, DefaultResultFiles),
		now:      opts.Now,
	}
	if s.now == nil {
		s.now = time.Now
	}
	return s
}

// Dir returns the store's folder.
func (s *ResultStore) Dir() string { return s.dir }

func (s *ResultStore) path(reg domain.RegistrationID, id domain.ResultID) string {
	return filepath.Join(s.dir, string(reg), string(id)+".txt")
}

// Put keeps text as a new result of registration reg and returns its id,
// then applies the retention rules (to older results only).
func (s *ResultStore) Put(reg domain.RegistrationID, text string) (domain.StoredResult, error) {
	if _, err := domain.ParseRegistrationID(string(reg)); err != nil {
		return domain.StoredResult{}, err
	}
	if len(text) > MaxResultBytes {
		return domain.StoredResult{}, domain.Errorf(domain.KindBadRequest, "mcp.result_too_large", "the result is %d bytes; at most %d are kept", len(text), MaxResultBytes)
	}
	if err := s.data.privateDir(s.dir); err != nil {
		return domain.StoredResult{}, err
	}
	if err := s.data.privateDir(filepath.Join(s.dir, string(reg))); err != nil {
		return domain.StoredResult{}, err
	}
	id := domain.NewResultID()
	path := s.path(reg, id)
	if err := s.data.writeFileAtomic(path, []byte(text)); err != nil {
		return domain.StoredResult{}, err
	}
	kept := domain.StoredResult{ID: id, RegistrationID: reg, Text: text, Time: s.now()}
	if fi, err := s.data.stat(path); err == nil {
		kept.Time = fi.ModTime()
	}
	s.prune(path)
	return kept, nil
}

// Get returns the result id; false when there is none (never kept,
// expired or removed).
func (s *ResultStore) Get(id domain.ResultID) (domain.StoredResult, bool, error) {
	if _, err := domain.ParseResultID(string(id)); err != nil {
		return domain.StoredResult{}, false, err
	}
	regs, err := s.data.readDir(s.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return domain.StoredResult{}, false, nil
	}
	if err != nil {
		return domain.StoredResult{}, false, ioError(err, "Failed to read directory %s: %v", s.dir, reason(err))
	}
	for _, d := range regs {
		reg, err := domain.ParseRegistrationID(d.Name())
		if err != nil || !d.IsDir() {
			continue
		}
		path := s.path(reg, id)
		data, fi, err := s.data.readTextInfo(path, MaxResultBytes, "result")
		if fi == nil && err == nil {
			continue
		}
		if err != nil {
			return domain.StoredResult{}, false, err
		}
		if s.now().Sub(fi.ModTime()) > s.maxAge {
			s.data.removeFile(path) // expired: the next prune would remove it
			return domain.StoredResult{}, false, nil
		}
		return domain.StoredResult{ID: id, RegistrationID: reg, Text: string(data), Time: fi.ModTime()}, true, nil
	}
	return domain.StoredResult{}, false, nil
}

// DeleteRegistration removes every result of reg.
func (s *ResultStore) DeleteRegistration(reg domain.RegistrationID) error {
	if _, err := domain.ParseRegistrationID(string(reg)); err != nil {
		return err
	}
	dir := filepath.Join(s.dir, string(reg))
	if err := s.data.removeAll(dir); err != nil {
		return ioError(err, "Failed to remove %s: %v", dir, reason(err))
	}
	return nil
}

// prune removes the expired results, then the oldest until the rest fit
// MaxTotalBytes and MaxFiles; keep (the result just written) stays. A
// file that cannot be removed is left for the next prune.
//
// Temporary files of interrupted writes (a kill -9 during a Put) are
// swept as at start-up (sweepTemp: one no live write holds), and those
// that stay, being written, count towards the limits like results: the
// disk they take is the store's.
func (s *ResultStore) prune(keep string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	type file struct {
		path string
		size int64
		mod  time.Time
		temp bool // a write in progress: counted, never removed here
	}
	var files []file
	regs, _ := s.data.readDir(s.dir)
	cutoff := s.now().Add(-LeftoverMinAge)
	for _, d := range regs {
		if _, err := domain.ParseRegistrationID(d.Name()); err != nil || !d.IsDir() {
			continue
		}
		dir := filepath.Join(s.dir, d.Name())
		entries, _ := s.data.readDir(dir)
		for _, e := range entries {
			temp := isTempName(e.Name())
			if !e.Type().IsRegular() || !temp && !strings.HasSuffix(e.Name(), ".txt") {
				continue
			}
			path := filepath.Join(dir, e.Name())
			if temp {
				if gone, _ := s.data.sweepTemp(path, cutoff); gone {
					continue
				}
			}
			if fi, err := e.Info(); err == nil {
				files = append(files, file{path, fi.Size(), fi.ModTime(), temp})
			}
		}
	}
	slices.SortFunc(files, func(a, b file) int { return a.mod.Compare(b.mod) }) // oldest first
	var total int64
	for _, f := range files {
		total += f.size
	}
	count, now := len(files), s.now()
	for _, f := range files {
		if f.path == keep || f.temp {
			continue
		}
		if now.Sub(f.mod) <= s.maxAge && total <= s.maxTotal && count <= s.maxFiles {
			continue
		}
		if s.data.removeFile(f.path) == nil {
			total -= f.size
			count--
		}
	}
}
