//go:build linux || darwin

package storage

import (
	"bufio"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ttmcp/ttmcp/backend/domain"
)

// The kill -9 suite (issue 27): a process writing each new kind of file
// (tool sets, capabilities, results, audit lines) is killed at random
// moments. Afterwards every file reads back whole, the start-up sweep
// removes every temporary file the kills left (however young), and a sweep
// run while another process writes never removes a temporary file under
// it.

// kill9Writes are the writes, by name: each writes one file of its kind
// into the data root.
var kill9Writes = map[string]func(root string, i int) error{
	"tool set": func(root string, i int) error {
		ts := domain.ToolSet{ID: domain.ToolSetID(id3), Name: fmt.Sprint("set ", i), ResultInlineCharLimit: 20_000}
		return Open(root).SaveToolSet(ts)
	},
	"capabilities": func(root string, i int) error {
		return Open(root).SaveCapabilities(id1, domain.Allowlist{Resources: i%2 == 0, Prompts: true})
	},
	"result": func(root string, i int) error {
		_, err := OpenResultStore(root, ResultOptions{}).Put(regA, strings.Repeat(fmt.Sprint(i%10), 256<<10))
		return err
	},
	"audit": func(root string, i int) error {
		_, err := OpenAuditLog(root, AuditOptions{}).Append(record(fmt.Sprint("call-", i), regA))
		return err
	},
}

// TestKill9Writer is the writing process (run by the suite with
// TTMCP_KILL9_WRITE set): it writes TTMCP_KILL9_COUNT files of the kind
// (0: until killed), says "ready" after the first, and exits 1 at the
// first failed write.
func TestKill9Writer(t *testing.T) {
	kind := os.Getenv("TTMCP_KILL9_WRITE")
	if kind == "" {
		t.Skip("run by TestKill9DuringEveryWrite")
	}
	root := os.Getenv("TTMCP_KILL9_ROOT")
	var count int
	fmt.Sscan(os.Getenv("TTMCP_KILL9_COUNT"), &count)
	for i := 0; count == 0 || i < count; i++ {
		if err := kill9Writes[kind](root, i); err != nil {
			fmt.Println("write failed:", err)
			os.Exit(1)
		}
		if i == 0 {
			fmt.Println("ready")
		}
	}
}

func startWriter(t *testing.T, kind, root string, count int) (*exec.Cmd, *bufio.Reader) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestKill9Writer$", "-test.count=1")
	cmd.Env = append(os.Environ(), "TTMCP_KILL9_WRITE="+kind, "TTMCP_KILL9_ROOT="+root, fmt.Sprint("TTMCP_KILL9_COUNT=", count))
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(out)
	if line, err := r.ReadString('\n'); err != nil || line != "ready\n" {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("%s writer: %q %v", kind, line, err)
	}
	return cmd, r
}

// tempFilesUnder lists the temporary files anywhere under root.
func tempFilesUnder(t *testing.T, root string) []string {
	t.Helper()
	var found []string
	filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err == nil && isTempName(d.Name()) {
			found = append(found, path)
		}
		return nil
	})
	return found
}

func TestKill9DuringEveryWrite(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	const rounds = 6
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 27))
	for kind, write := range kill9Writes {
		t.Run(kind, func(t *testing.T) {
			root := t.TempDir()
			left := 0
			for range rounds {
				cmd, _ := startWriter(t, kind, root, 0)
				time.Sleep(time.Duration(rng.IntN(15)) * time.Millisecond)
				cmd.Process.Signal(syscall.SIGKILL)
				cmd.Wait()
				left = max(left, len(tempFilesUnder(t, root)))
			}
			t.Logf("%d temporary files left at most by %d kills", left, rounds)
			// Every file reads back whole.
			switch kind {
			case "tool set":
				if _, ok, err := Open(root).LoadToolSet(domain.ToolSetID(id3)); !ok || err != nil {
					t.Errorf("tool set: %v %v", ok, err)
				}
			case "capabilities":
				if _, ok, err := Open(root).LoadCapabilities(id1); !ok || err != nil {
					t.Errorf("capabilities: %v %v", ok, err)
				}
			case "result":
				s := OpenResultStore(root, ResultOptions{})
				entries, _ := os.ReadDir(filepath.Join(s.Dir(), string(regA)))
				kept := 0
				for _, e := range entries {
					id, ok := strings.CutSuffix(e.Name(), ".txt")
					if !ok {
						continue
					}
					r, found, err := s.Get(domain.ResultID(id))
					if err != nil || !found || len(r.Text) != 256<<10 || strings.Trim(r.Text, r.Text[:1]) != "" {
						t.Errorf("result %s: %v %v, %d bytes", id, found, err, len(r.Text))
					}
					kept++
				}
				if kept == 0 {
					t.Error("no result was kept")
				}
			case "audit":
				recs, skipped, err := OpenAuditLog(root, AuditOptions{}).List(domain.AuditQuery{Limit: 1 << 20})
				if err != nil || len(recs) == 0 || skipped > rounds { // at most a torn last line a kill
					t.Errorf("audit: %d records, %d skipped, %v", len(recs), skipped, err)
				}
			}
			// The start-up sweep leaves no temporary file, young as they are.
			if _, err := RemoveLeftovers(root, LeftoverMinAge); err != nil {
				t.Fatal(err)
			}
			if tmp := tempFilesUnder(t, root); len(tmp) != 0 {
				t.Errorf("left after the sweep: %v", tmp)
			}
			// A result's read back whole, and the next write still works.
			if err := write(root, 1); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// A sweep running while another process writes removes none of its
// temporary files: every one of the writer's writes succeeds.
func TestSweepNeverRemovesALiveWrite(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	root := t.TempDir()
	cmd, out := startWriter(t, "capabilities", root, 150)
	type exit struct {
		said []byte
		err  error
	}
	done := make(chan exit, 1)
	go func() {
		said, _ := io.ReadAll(out) // before Wait, which closes the pipe
		done <- exit{said, cmd.Wait()}
	}()
	swept := 0
	for {
		select {
		case e := <-done:
			if e.err != nil {
				t.Fatalf("the writer failed (%v): %s", e.err, e.said)
			}
			if swept == 0 {
				t.Fatal("no sweep ran during the writes")
			}
			return
		default:
			if _, err := RemoveLeftovers(root, LeftoverMinAge); err != nil {
				t.Fatal(err)
			}
			swept++
		}
	}
}

// Issue 27 item 7: the temporary files of Puts killed mid-write are swept
// by the next Put (no process holds their lock), and those of writes in
// progress count towards the store's limits, so the disk the store takes
// stays within them.
func TestResultStoreSweepsAndCountsTemporaryFiles(t *testing.T) {
	root := t.TempDir()
	s := OpenResultStore(root, ResultOptions{MaxTotalBytes: 1000})
	base := time.Now().Add(-time.Hour)
	var paths []string
	for i := range 3 {
		kept, err := s.Put(regA, strings.Repeat("r", 300))
		if err != nil {
			t.Fatal(err)
		}
		p := s.path(regA, kept.ID)
		mt := base.Add(time.Duration(i) * time.Minute)
		if err := os.Chtimes(p, mt, mt); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	dir := filepath.Join(s.Dir(), string(regA))
	killed := filepath.Join(dir, ".ttmcp-00000000000000000000000000000001.tmp") // young and unlocked
	writeFile(t, killed, strings.Repeat("k", 500))
	live := filepath.Join(dir, ".ttmcp-00000000000000000000000000000002.tmp")
	writeFile(t, live, strings.Repeat("l", 400))
	lf, err := os.Open(live)
	if err != nil {
		t.Fatal(err)
	}
	defer lf.Close()
	if err := syscall.Flock(int(lf.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil { // as a live writer holds it
		t.Fatal(err)
	}

	if _, err := s.Put(regA, strings.Repeat("n", 50)); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(killed); !os.IsNotExist(err) {
		t.Errorf("the killed write's temporary file is still there (%v)", err)
	}
	if _, err := os.Lstat(live); err != nil {
		t.Errorf("the live write's temporary file was removed (%v)", err)
	}
	// 400 in the live write + 4 results (950) is 1350: the two oldest go.
	for i, p := range paths {
		_, err := os.Lstat(p)
		if gone := os.IsNotExist(err); gone != (i < 2) {
			t.Errorf("result %d gone = %v (%v)", i, gone, err)
		}
	}
}

// A kept result's id cannot reach out of its registration's folder or the
// data root (issue 27 item 8): an id is a canonical UUID, a registration
// folder is a real folder, and a result file linked out is refused.
func TestResultIDsStayInTheirFolder(t *testing.T) {
	root := t.TempDir()
	s := OpenResultStore(root, ResultOptions{})
	for _, id := range []string{"../../registrations/x", "..", "/etc/passwd", "00000000-0000-4000-8000-000000000001/../x", ""} {
		if _, ok, err := s.Get(domain.ResultID(id)); ok || err == nil {
			t.Errorf("Get(%q) = %v, %v; want refused", id, ok, err)
		}
	}
	kept, err := s.Put(regA, "mine")
	if err != nil {
		t.Fatal(err)
	}
	outside := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(s.Dir(), string(regB))); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(outside, "00000000-0000-4000-8000-000000000001.txt"), "not mine")
	if _, ok, err := s.Get("00000000-0000-4000-8000-000000000001"); ok || err != nil {
		t.Errorf("a result in a linked folder: %v %v; want none", ok, err)
	}
	if r, ok, err := s.Get(kept.ID); !ok || err != nil || r.Text != "mine" {
		t.Errorf("Get = %v %v %v", r, ok, err)
	}
}
