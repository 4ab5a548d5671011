package domain

import "strings"

// The extension store is TauriTavern's key–value store for extensions
// (api.extension.store): JSON entries and binary blobs, grouped by
// namespace (one per extension) and table. Its names become path
// components under the data root, so they follow upstream's rule (ASCII
// letters, digits, '_', '-', '.', not starting with '.'), which keeps every
// entry inside its namespace's folder.

// Codes of the extension store. Upstream reports these failures without a
// code; ttmcp adds one so a page can tell them apart.
const (
	// CodeExtensionStoreNameInvalid: a namespace, table or key that is
	// empty, "." or "..", starts with '.', holds a character outside
	// [A-Za-z0-9_.-] or is too long. BadRequest.
	CodeExtensionStoreNameInvalid = "mcp.extension_store_name_invalid"
	// CodeExtensionStoreNotFound: no such entry, blob or table. NotFound.
	CodeExtensionStoreNotFound = "mcp.extension_store_not_found"
	// CodeExtensionStoreKeyExists: renameKey onto a key that exists.
	// Conflict.
	CodeExtensionStoreKeyExists = "mcp.extension_store_key_exists"
	// CodeExtensionStoreValueInvalid: a JSON value the store will not
	// write (nested deeper than serde_json reads, or too large once
	// written). BadRequest.
	CodeExtensionStoreValueInvalid = "mcp.extension_store_value_invalid"
	// CodeExtensionStoreBlobInvalid: blob data that is empty or not
	// standard padded base64. BadRequest.
	CodeExtensionStoreBlobInvalid = "mcp.extension_store_blob_invalid"
	// CodeExtensionStoreEntryUnreadable: a stored entry that cannot be
	// served: not JSON, not a regular file, or larger than the store
	// serves. Internal: the file, not the request, is at fault.
	CodeExtensionStoreEntryUnreadable = "mcp.extension_store_entry_unreadable"
	// CodeExtensionStoreUnavailable: the backend has no extension store.
	CodeExtensionStoreUnavailable = "mcp.extension_store_unavailable"
)

// DefaultExtensionStoreTable is the table of a call that names none (or
// only whitespace), as upstream's service resolves it.
const DefaultExtensionStoreTable = "main"

// MaxExtensionStoreName bounds a name in bytes, so that "<key>.json" fits
// the 255-byte file name limit of common file systems. Upstream has no
// bound; such a name fails there when the file is created.
const MaxExtensionStoreName = 250

// ExtensionStoreName validates one name (label is "namespace", "table",
// "key" or "newKey") after trimming surrounding whitespace, as upstream
// does, and returns the trimmed name.
func ExtensionStoreName(raw, label string) (string, error) {
	v := strings.TrimSpace(raw)
	fail := func(why string) error {
		return Errorf(KindBadRequest, CodeExtensionStoreNameInvalid, "Extension store %s %s: %q", label, why, raw)
	}
	switch {
	case v == "":
		return "", Errorf(KindBadRequest, CodeExtensionStoreNameInvalid, "Extension store %s cannot be empty", label)
	case v == "." || v == "..":
		return "", fail("cannot be '.' or '..'")
	case v[0] == '.':
		return "", fail("cannot start with '.'")
	case len(v) > MaxExtensionStoreName:
		return "", fail("is longer than 250 characters")
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-' || c == '.') {
			return "", fail("contains illegal characters (allowed: ASCII letters, digits, '_', '-', '.')")
		}
	}
	return v, nil
}

// ExtensionStoreTable resolves an optional table name: absent, empty or
// whitespace means DefaultExtensionStoreTable.
func ExtensionStoreTable(raw *string) (string, error) {
	if raw == nil || strings.TrimSpace(*raw) == "" {
		return DefaultExtensionStoreTable, nil
	}
	return ExtensionStoreName(*raw, "table")
}
