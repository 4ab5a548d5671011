package service

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/ttmcp/ttmcp/backend/domain"
	"github.com/ttmcp/ttmcp/jsapi"
)

// listView is the registrations as list_mcp_servers (and the model-tool
// listing) sees them, in memory, so a list does not read and parse every
// file: 200 pages listing 1,500 registrations at once used to read and
// parse 300,000 files.
//
// The files stay the truth; the view is revalidated against the folder
// before every list, in one of two ways:
//
//   - cheaply, with one Stat of the folder: its stamp changes whenever an
//     entry is added, removed or renamed over, which is every write of
//     ttmcp and TauriTavern (temporary file, then rename) and every file
//     created or deleted by hand;
//   - fully, with the folder's listing and a Stat of each file, reading
//     again the files whose stamp (domain.FileStamp) changed: when the
//     folder's stamp changed, when the service forgot a file it wrote, and
//     at least every fullEvery, which is how a file rewritten in place (an
//     editor saving over it) is noticed.
//
// Time stamps are coarse (a few milliseconds on Linux, 2 s on FAT), so a
// stamp taken within racyWindow of its own time is not trusted (the "racy
// git" rule): a change in the same tick as the last look is never missed.
//
// Lists that arrive while a revalidation runs share the next one, which
// starts after they arrived: a burst of lists costs two revalidations, not
// one each, and no list misses a change (but an in-place rewrite, see
// above) made before it was asked for.
type listView struct {
	regs Registrations
	now  func() time.Time

	mu       sync.Mutex
	files    map[string]*viewEntry // by file name: what was loaded, and from which version
	built    *viewResult           // the result of the last revalidation, while nothing changed
	dirStamp domain.FileStamp      // of the folder, when built was made (unknown: do not trust)
	fullDue  time.Time             // when the next full revalidation is due at the latest
	running  *viewRound            // the revalidation in progress, if any
	next     *viewRound            // the one that runs after it, which new lists join
}

// Revalidation timing (see listView).
const (
	fullEvery  = time.Second
	racyWindow = 3 * time.Second
)

// viewEntry is one loaded file: a registration or the issue of a file that
// could not be loaded. Entries are never modified, only replaced.
type viewEntry struct {
	stamp domain.FileStamp
	reg   domain.Registration
	issue *jsapi.StorageIssue
}

// viewResult is a revalidated view in file name order. It is shared by
// every list that gets it: nobody modifies it.
type viewResult struct {
	regs   []domain.Registration
	issues []jsapi.StorageIssue
	// versions[i] is the entry regs[i] was loaded as: the same pointer
	// while its file is unchanged (what the model-tool cache keys on).
	versions []*viewEntry

	once    sync.Once
	dto     jsapi.McpServerList // built on the first list that needs it
	encOnce sync.Once
	enc     []byte // dto encoded by the first ListEncoded
	encErr  error
	// auth is dto with the sign-in states, as of one auth generation
	// (auth.go).
	auth atomic.Pointer[authedList]
}

type viewRound struct {
	done  chan struct{}
	lists int // the lists waiting for it (under listView.mu)
	res   *viewResult
	err   error
}

func newListView(regs Registrations) *listView {
	return &listView{regs: regs, now: time.Now, files: map[string]*viewEntry{}}
}

// current returns the view, revalidated after the call began.
func (v *listView) current() (*viewResult, error) {
	v.mu.Lock()
	if v.running == nil {
		r := &viewRound{done: make(chan struct{})}
		v.running = r
		v.mu.Unlock()
		v.run(r)
		return r.res, r.err
	}
	if r := v.next; r != nil { // a round that starts after this call
		r.lists++
		v.mu.Unlock()
		<-r.done
		return r.res, r.err
	}
	r := &viewRound{done: make(chan struct{}), lists: 1}
	v.next = r
	prev := v.running
	v.mu.Unlock()
	<-prev.done // run handed the turn to r
	v.run(r)
	return r.res, r.err
}

// run revalidates the view for round r, then hands the turn to the next
// round, if any.
func (v *listView) run(r *viewRound) {
	r.res, r.err = v.revalidate()
	v.mu.Lock()
	v.running, v.next = v.next, nil
	v.mu.Unlock()
	close(r.done)
}

// revalidate brings the view up to date with the folder. Files are loaded
// outside the lock, so a write of the service (forget) may come in
// between: a loaded entry replaces only the entry it was compared with.
func (v *listView) revalidate() (*viewResult, error) {
	now := v.now()
	dir := v.regs.RegistrationsFolderStamp()
	v.mu.Lock()
	if v.built != nil && dir.Same(v.dirStamp) && now.Before(v.fullDue) {
		defer v.mu.Unlock()
		return v.built, nil
	}
	seen := make(map[string]*viewEntry, len(v.files))
	for name, e := range v.files {
		seen[name] = e
	}
	v.mu.Unlock()

	files, err := v.regs.ListRegistrationFiles()
	if err != nil {
		return nil, err
	}
	loaded := map[string]*viewEntry{}
	present := files[:0:0] // files without those removed since they were listed
	for _, f := range files {
		if e := seen[f.Name]; e != nil && e.stamp.Same(f.Stamp) {
			present = append(present, f)
			continue
		}
		reg, issue, stamp, found := v.regs.LoadRegistrationFile(f.Name)
		if !found { // a removal raced the listing: as if it had come first
			continue
		}
		if !settled(stamp, now) {
			stamp = domain.FileStamp{} // read it again next time
		}
		loaded[f.Name] = &viewEntry{stamp: stamp, reg: reg, issue: issue}
		present = append(present, f)
	}
	files = present

	v.mu.Lock()
	defer v.mu.Unlock()
	changed := false
	for name, e := range loaded {
		if v.files[name] == seen[name] { // else forgotten meanwhile: read it again next time
			v.files[name] = e
			changed = true
		}
	}
	listed := make(map[string]bool, len(files))
	for _, f := range files {
		listed[f.Name] = true
	}
	for name, e := range v.files {
		if !listed[name] && e == seen[name] {
			delete(v.files, name)
			changed = true
		}
	}
	v.fullDue = now.Add(fullEvery)
	v.dirStamp = domain.FileStamp{}
	if changed {
		v.built = nil
	}
	if v.built == nil {
		res := &viewResult{regs: []domain.Registration{}, issues: []jsapi.StorageIssue{}}
		complete := true
		for _, f := range files { // file name order, as Scan
			e := v.files[f.Name]
			if e == nil { // forgotten meanwhile: this list still shows what it read
				e, complete = loaded[f.Name], false
				if e == nil {
					e = seen[f.Name]
				}
			}
			if e.issue != nil {
				res.issues = append(res.issues, *e.issue)
			} else {
				res.regs = append(res.regs, e.reg)
				res.versions = append(res.versions, e)
			}
		}
		if !complete {
			return res, nil
		}
		v.built = res
	}
	if settled(dir, now) {
		v.dirStamp = dir // the folder as it was before it was listed
	}
	return v.built, nil
}

// settled reports whether stamp is known and old enough, at now, that a
// change in the same time-stamp tick is impossible.
func settled(stamp domain.FileStamp, now time.Time) bool {
	newest := max(stamp.ModTime, stamp.Change)
	return stamp.Known && now.Sub(time.Unix(0, newest)) > racyWindow
}

// forget drops the file of registration id from the view, after the
// service wrote or removed it: the next list reads it again.
func (v *listView) forget(id domain.RegistrationID) {
	v.mu.Lock()
	defer v.mu.Unlock()
	delete(v.files, string(id)+".json")
	v.built = nil
}

// serverList returns the page's projection of res, built once per result.
func (res *viewResult) serverList() jsapi.McpServerList {
	res.once.Do(func() {
		res.dto = jsapi.McpServerList{Servers: make([]jsapi.McpServer, 0, len(res.regs)), StorageIssues: res.issues}
		for _, r := range res.regs {
			res.dto.Servers = append(res.dto.Servers, ServerDTO(r))
		}
	})
	return res.dto
}

// encoded returns serverList encoded by encode, once per result: every
// list of an unchanged folder shares the same bytes.
func (res *viewResult) encoded(encode func(any) ([]byte, error)) ([]byte, error) {
	res.encOnce.Do(func() { res.enc, res.encErr = encode(res.serverList()) })
	return res.enc, res.encErr
}
