package storage

import (
	"bytes"
	"testing"

	"github.com/ttmcp/ttmcp/backend/domain"
)

// FuzzDecodeRegistration: a file's bytes never panic the decoder, and a
// file that loads writes back to bytes that load to the same registration
// (so a load-save cycle never loses or corrupts anything).
func FuzzDecodeRegistration(f *testing.F) {
	const id = "550e8400-e29b-41d4-a716-446655440000"
	f.Add([]byte(`{"schemaVersion":1,"kind":"tauritavern.mcpServerRegistration","id":"` + id + `","displayName":"S","endpoint":"http://a/","protocolVersion":"auto","state":"paused"}`))
	f.Add([]byte(`{"schemaVersion":1,"kind":"tauritavern.mcpServerRegistration","id":"` + id + `","displayName":" S ","endpoint":"HTTP://A","headers":{"X":" v "},"protocolVersion":"2025-06-18","state":"active","toolPermissions":{"t":"ask"},"toolDescriptionOverrides":{"t":{"description":"d","properties":{"q":"x"}}}}`))
	f.Add([]byte(`{"schemaVersion":2}`))
	f.Add([]byte("\xff"))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := decodeRegistration(data, "fuzz.json", id)
		if err != nil {
			return
		}
		out, err := encodeRegistration(r)
		if err != nil {
			t.Fatalf("a loaded registration does not encode: %v", err)
		}
		back, err := decodeRegistration(out, "fuzz.json", id)
		if err != nil {
			t.Fatalf("written bytes do not load: %v\n%s", err, out)
		}
		again, _ := encodeRegistration(back)
		if !bytes.Equal(out, again) {
			t.Fatalf("not a fixed point:\n%s\n%s", out, again)
		}
		if back.ID != domain.RegistrationID(id) {
			t.Fatalf("id %s", back.ID)
		}
	})
}
