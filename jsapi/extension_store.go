package jsapi

// The extension store (window.__TAURITAVERN__.api.extension.store):
// TauriTavern's key–value store for extensions, with upstream's command
// names. Unlike the MCP commands, these take their arguments flat, as
// upstream's Tauri commands do ({namespace, key, table}, not {dto: ...}),
// so safeInvoke('get_extension_store_json', {namespace, key}) works as it
// does in TauriTavern. table is optional everywhere except
// delete_extension_store_table; absent, null or blank means "main".
const (
	CmdGetExtensionStoreJSON      = "get_extension_store_json"
	CmdTryGetExtensionStoreJSON   = "try_get_extension_store_json"
	CmdSetExtensionStoreJSON      = "set_extension_store_json"
	CmdUpdateExtensionStoreJSON   = "update_extension_store_json"
	CmdRenameExtensionStoreKey    = "rename_extension_store_key"
	CmdDeleteExtensionStoreJSON   = "delete_extension_store_json"
	CmdListExtensionStoreKeys     = "list_extension_store_keys"
	CmdListExtensionStoreTables   = "list_extension_store_tables"
	CmdDeleteExtensionStoreTable  = "delete_extension_store_table"
	CmdGetExtensionStoreBlob      = "get_extension_store_blob"
	CmdSetExtensionStoreBlob      = "set_extension_store_blob"
	CmdDeleteExtensionStoreBlob   = "delete_extension_store_blob"
	CmdListExtensionStoreBlobKeys = "list_extension_store_blob_keys"
)

// StoreCommands lists the extension store's commands, in upstream's order.
var StoreCommands = []string{
	CmdGetExtensionStoreJSON, CmdTryGetExtensionStoreJSON, CmdSetExtensionStoreJSON,
	CmdUpdateExtensionStoreJSON, CmdRenameExtensionStoreKey, CmdDeleteExtensionStoreJSON,
	CmdListExtensionStoreKeys, CmdListExtensionStoreTables, CmdDeleteExtensionStoreTable,
	CmdGetExtensionStoreBlob, CmdSetExtensionStoreBlob, CmdDeleteExtensionStoreBlob,
	CmdListExtensionStoreBlobKeys,
}

// Names (namespace, key, newKey, table) are tagged dto:"optional": an
// absent one is checked as empty, with upstream's "Extension store
// <name> cannot be empty", rather than refused as a missing member.

// ExtensionStoreEntryArgs names one entry: get, try_get and delete of a
// JSON entry; get and delete of a blob.
type ExtensionStoreEntryArgs struct {
	Namespace string  `json:"namespace" dto:"optional"`
	Key       string  `json:"key" dto:"optional"`
	Table     *string `json:"table,omitzero"`
}

// ExtensionStoreSetJSONArgs: set_extension_store_json replaces the entry
// with Value; update_extension_store_json merges Value into it (objects
// recursively, anything else replaces). Value is required; null is a
// value.
type ExtensionStoreSetJSONArgs struct {
	Namespace string    `json:"namespace" dto:"optional"`
	Key       string    `json:"key" dto:"optional"`
	Value     JSONValue `json:"value"`
	Table     *string   `json:"table,omitzero"`
}

// ExtensionStoreRenameArgs: rename_extension_store_key moves Key to NewKey
// within one table.
type ExtensionStoreRenameArgs struct {
	Namespace string  `json:"namespace" dto:"optional"`
	Key       string  `json:"key" dto:"optional"`
	NewKey    string  `json:"newKey" dto:"optional"`
	Table     *string `json:"table,omitzero"`
}

// ExtensionStoreTableArgs names a table: list_extension_store_keys and
// list_extension_store_blob_keys.
type ExtensionStoreTableArgs struct {
	Namespace string  `json:"namespace" dto:"optional"`
	Table     *string `json:"table,omitzero"`
}

// ExtensionStoreNamespaceArgs: list_extension_store_tables.
type ExtensionStoreNamespaceArgs struct {
	Namespace string `json:"namespace" dto:"optional"`
}

// ExtensionStoreDeleteTableArgs: delete_extension_store_table, whose table
// is required.
type ExtensionStoreDeleteTableArgs struct {
	Namespace string `json:"namespace" dto:"optional"`
	Table     string `json:"table" dto:"optional"`
}

// ExtensionStoreSetBlobArgs: set_extension_store_blob. DataBase64 is
// standard padded base64 (surrounding whitespace ignored).
type ExtensionStoreSetBlobArgs struct {
	Namespace  string  `json:"namespace" dto:"optional"`
	Key        string  `json:"key" dto:"optional"`
	DataBase64 string  `json:"dataBase64"`
	Table      *string `json:"table,omitzero"`
}

// ExtensionStoreJSONLookup is the result of try_get_extension_store_json:
// {found: false}, or {found: true, value} (value may be null).
type ExtensionStoreJSONLookup struct {
	Found bool      `json:"found"`
	Value JSONValue `json:"value,omitzero"`
}

// ExtensionStoreBlob is the result of get_extension_store_blob, with
// upstream's snake_case member names. MimeType is guessed from the key's
// extension (application/octet-stream when unknown).
type ExtensionStoreBlob struct {
	ContentBase64 string `json:"content_base64"`
	MimeType      string `json:"mime_type"`
}

// JSONValue is one JSON value kept as its text, so numbers and member
// order reach the store exactly as the page wrote them. The zero value
// (nil) is "absent"; JSON null is the text "null". It implements the
// standard Marshaler and Unmarshaler interfaces without importing a JSON
// package (jsapi is linked into the wasm shim, which must stay lean).
type JSONValue []byte

// UnmarshalJSON keeps a copy of the value's text (the decoder has checked
// its syntax).
func (v *JSONValue) UnmarshalJSON(b []byte) error {
	*v = append(JSONValue{}, b...)
	return nil
}

// MarshalJSON returns the text, or null for the zero value.
func (v JSONValue) MarshalJSON() ([]byte, error) {
	if v == nil {
		return []byte("null"), nil
	}
	return v, nil
}
