//go:build !unix

package stdiotest

import "os"

// Alive reports whether pid is a running process.
func Alive(pid int) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	p.Release()
	return true
}
