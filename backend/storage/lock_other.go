//go:build !unix

package storage

import "os"

// locksTemps: outside Unix temporary files are not locked, so a sweep
// goes by their age alone (see RemoveLeftovers).
const locksTemps = false

func lockTemp(*os.File) error { return nil }

func tryLockTemp(*os.File) (bool, error) { return false, nil }

func linked(*os.File) bool { return true }
