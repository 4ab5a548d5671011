package storage

import (
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/ttmcp/ttmcp/backend/domain"
)

func authFixture(t *testing.T) domain.Auth {
	t.Helper()
	e, err := domain.ParseEndpoint("https://mcp.example.com/mcp")
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 3, 1, 12, 0, 0, 5, time.UTC)
	return domain.Auth{
		RegistrationID: id1,
		Endpoint:       e,
		Challenge: &domain.Challenge{Status: 403, Error: "insufficient_scope", Description: "more", Scopes: []string{"a", "b"},
			ResourceMetadata: "https://mcp.example.com/.well-known/oauth-protected-resource/mcp",
			Header:           []string{`Bearer error="insufficient_scope", scope="a b"`}, At: at},
		Token: &domain.Token{
			AccessToken: "access-secret-1", RefreshToken: "refresh-secret-1", ExpiresAt: at.Add(time.Hour),
			Scopes: []string{"a"}, TokenEndpoint: "https://as.example.com/token", Resource: "https://mcp.example.com/mcp",
			Client:     domain.OAuthClient{ID: "client-1", Secret: "client-secret-1", AuthMethod: domain.AuthMethodBasic, Registration: domain.ClientDynamic},
			SignedInAt: at,
		},
	}
}

func TestAuthRoundTrip(t *testing.T) {
	s := Open(t.TempDir())
	want := authFixture(t)
	data := roundTrip(t, want, s.SaveAuth, s.AuthPath(want.RegistrationID), func() (domain.Auth, bool, error) {
		return s.LoadAuth(want.RegistrationID, want.Endpoint)
	})
	// The file holds the credentials themselves, not "[redacted]".
	for _, secret := range []string{"access-secret-1", "refresh-secret-1", "client-secret-1"} {
		if !strings.Contains(data, secret) {
			t.Errorf("file lacks %s:\n%s", secret, data)
		}
	}

	// Only a challenge; then only a token without a lifetime.
	want.Token = nil
	if err := s.SaveAuth(want); err != nil {
		t.Fatal(err)
	}
	if got, _, _ := s.LoadAuth(want.RegistrationID, want.Endpoint); !reflect.DeepEqual(got, want) {
		t.Fatalf("challenge only: got %#v", got)
	}
	want = authFixture(t)
	want.Challenge, want.Token.ExpiresAt, want.Token.RefreshToken = nil, time.Time{}, ""
	if err := s.SaveAuth(want); err != nil {
		t.Fatal(err)
	}
	if got, _, _ := s.LoadAuth(want.RegistrationID, want.Endpoint); !reflect.DeepEqual(got, want) {
		t.Fatalf("token only: got %#v", got)
	}
}

// The file is 0600 in a 0700 directory, and a directory made open to
// others by hand is closed again on the next write.
func TestAuthFileModes(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("Unix permissions")
	}
	s := Open(t.TempDir())
	a := authFixture(t)
	if err := s.SaveAuth(a); err != nil {
		t.Fatal(err)
	}
	mode := func(p string) os.FileMode {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		return fi.Mode().Perm()
	}
	path := s.AuthPath(a.RegistrationID)
	if m := mode(path); m != 0o600 {
		t.Errorf("file mode %o", m)
	}
	if m := mode(filepath.Dir(path)); m != 0o700 {
		t.Errorf("dir mode %o", m)
	}
	if err := os.Chmod(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := s.SaveAuth(a); err != nil {
		t.Fatal(err)
	}
	if m := mode(filepath.Dir(path)); m != 0o700 {
		t.Errorf("dir mode after a write %o", m)
	}
}

// A file bound to another endpoint reads as absent; a missing file too.
func TestAuthBoundToEndpoint(t *testing.T) {
	s := Open(t.TempDir())
	a := authFixture(t)
	if err := s.SaveAuth(a); err != nil {
		t.Fatal(err)
	}
	other, _ := domain.ParseEndpoint("https://mcp.example.com/other")
	if _, ok, err := s.LoadAuth(a.RegistrationID, other); ok || err != nil {
		t.Fatalf("other endpoint: %v %v", ok, err)
	}
	if _, ok, err := s.LoadAuth(id2, a.Endpoint); ok || err != nil {
		t.Fatalf("no file: %v %v", ok, err)
	}
}

// Deleting: DeleteAuth, and saving an Auth that holds nothing.
func TestAuthDelete(t *testing.T) {
	s := Open(t.TempDir())
	a := authFixture(t)
	for _, del := range []func() error{
		func() error { return s.DeleteAuth(a.RegistrationID) },
		func() error { return s.SaveAuth(domain.Auth{RegistrationID: a.RegistrationID, Endpoint: a.Endpoint}) },
	} {
		if err := s.SaveAuth(a); err != nil {
			t.Fatal(err)
		}
		if err := del(); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(s.AuthPath(a.RegistrationID)); !os.IsNotExist(err) {
			t.Fatalf("file still there: %v", err)
		}
	}
	if err := s.DeleteAuth(a.RegistrationID); err != nil {
		t.Fatalf("deleting nothing: %v", err)
	}
}

// Reading is strict: damage is an error naming the file, never "absent"
// and never half a sign-in.
func TestAuthStrict(t *testing.T) {
	s := Open(t.TempDir())
	a := authFixture(t)
	if err := s.SaveAuth(a); err != nil {
		t.Fatal(err)
	}
	path := s.AuthPath(a.RegistrationID)
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, old, new, want string
	}{
		{"unknown member", `"kind"`, `"extra": 1, "kind"`, "unknown field `extra`"},
		{"unknown token member", `"accessToken"`, `"idToken": "x", "accessToken"`, "unknown field `idToken`"},
		{"kind", `"ttmcp.mcpServerAuth"`, `"ttmcp.other"`, "mcp.auth_kind_invalid"},
		{"version", `"schemaVersion": 1`, `"schemaVersion": 2`, "mcp.auth_schema_unsupported"},
		{"id", `"registrationId": "` + id1, `"registrationId": "` + id2, "mcp.auth_registration_mismatch"},
		{"missing token member", `"refreshToken": "refresh-secret-1",`, ``, "missing field `refreshToken`"},
		{"missing client member", `"authMethod": "client_secret_basic",`, ``, "missing field `authMethod`"},
		{"null token", `"token": {`, `"token": null, "x": {`, "null"},
		{"auth method", `"client_secret_basic"`, `"private_key_jwt"`, "authMethod"},
		{"no tokens", `"accessToken": "access-secret-1", "refreshToken": "refresh-secret-1"`, `"accessToken": "", "refreshToken": ""`, "without an access or refresh token"},
		{"status", `"status": 403`, `"status": 500`, "challenge status"},
		{"endpoint", `"endpoint": "https://mcp.example.com/mcp"`, `"endpoint": "HTTPS://mcp.example.com/mcp"`, "mcp.auth_endpoint_invalid"},
	}
	compact := strings.NewReplacer("\n", "", "  ", "").Replace(string(good))
	compact = strings.ReplaceAll(compact, `,"`, `, "`)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !strings.Contains(compact, tt.old) {
				t.Fatalf("fixture lacks %q:\n%s", tt.old, compact)
			}
			if err := os.WriteFile(path, []byte(strings.Replace(compact, tt.old, tt.new, 1)), 0o600); err != nil {
				t.Fatal(err)
			}
			_, ok, err := s.LoadAuth(a.RegistrationID, a.Endpoint)
			if err == nil || ok || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), path) {
				t.Fatalf("got %v %v, want an error with %q naming the file", ok, err, tt.want)
			}
		})
	}
	// The compacted file itself still reads.
	if err := os.WriteFile(path, []byte(compact), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := s.LoadAuth(a.RegistrationID, a.Endpoint); !ok || err != nil {
		t.Fatalf("compact file: %v %v", ok, err)
	}
}
