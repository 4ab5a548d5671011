package storage

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io/fs"
	"path/filepath"

	"github.com/ttmcp/ttmcp/backend/domain"
)

// The plugin secret (issue 28): SillyTavern's server plugin proves with it
// that a request came through SillyTavern's gate. It lives in the data
// root, beside the data it guards, in a folder of ttmcp's own (_ttmcp, not
// _tauritavern: TauriTavern has no such file), readable by the owner only:
// the plugin runs as the same user as the backend (it starts it), and a
// page can never read it.

// PluginSecretDir is the folder of ttmcp's own files in a data root.
const PluginSecretDir = "_ttmcp"

// pluginSecretBytes is the secret's size: 256 bits, 64 hex characters.
const pluginSecretBytes = 32

// maxPluginSecretFileBytes bounds the read: the file is 65 bytes; a larger
// one is damaged, and reading it must not cost more.
const maxPluginSecretFileBytes = 1 << 10

// PluginSecretPath is the secret's file in dataRoot.
func PluginSecretPath(dataRoot string) string {
	return filepath.Join(dataRoot, PluginSecretDir, "plugin-secret")
}

// LoadPluginSecret returns the plugin secret of dataRoot, creating it when
// absent (64 lower-case hex characters and a newline, mode 0600, in a 0700
// folder). It is kept across restarts, so a plugin that read it once goes
// on working. A file that is not a valid secret (damaged by another
// program, truncated, not a regular file) is replaced with a new secret,
// and damaged says what was wrong with it, for the log; a secret file
// readable by others is closed to them. err is a failure to read or write
// the folder: the backend then serves no plugin request.
func LoadPluginSecret(dataRoot string) (secret string, damaged, err error) {
	root := newDataRoot(dataRoot)
	path := PluginSecretPath(dataRoot)
	if err := root.privateDir(filepath.Dir(path)); err != nil {
		return "", nil, err
	}
	data, fi, rerr := root.readRegularInfo(path, maxPluginSecretFileBytes, "plugin secret")
	switch {
	case rerr != nil:
		damaged = rerr
	case fi == nil:
		// absent: create it below
	case !validPluginSecret(data):
		damaged = domain.Errorf(domain.KindBadRequest, "", "Invalid plugin secret in %s: want 64 hex digits and a newline", path)
	default:
		if fi.Mode().Perm()&0o077 != 0 {
			if err := root.chmod(path, fileMode); err != nil {
				return "", nil, ioError(err, "Failed to restrict %s: %v", path, reason(err))
			}
		}
		return string(data[:2*pluginSecretBytes]), nil, nil
	}
	if damaged != nil {
		// Something that is not a regular file cannot be renamed over;
		// remove an empty directory or a dangling link first (anything
		// else fails the rename below, with its reason).
		if fi, err := root.lstat(path); err == nil && !fi.Mode().IsRegular() {
			if err := root.remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return "", damaged, ioError(err, "Failed to replace %s: %v", path, reason(err))
			}
		}
	}
	b := make([]byte, pluginSecretBytes)
	rand.Read(b) // never fails (crypto/rand contract since Go 1.24)
	secret = hex.EncodeToString(b)
	if err := root.writeFileAtomic(path, []byte(secret+"\n")); err != nil {
		return "", damaged, err
	}
	return secret, damaged, nil
}

// validPluginSecret reports whether data is a secret as LoadPluginSecret
// writes it.
func validPluginSecret(data []byte) bool {
	if len(data) != 2*pluginSecretBytes+1 || data[len(data)-1] != '\n' {
		return false
	}
	for _, c := range data[:len(data)-1] {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}
