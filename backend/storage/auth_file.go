package storage

import (
	"errors"
	"io/fs"
	"path/filepath"
	"slices"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ttmcp/ttmcp/backend/domain"
)

// The auth file, ttmcp's own kind (TauriTavern has none): what the backend
// keeps of one registration's authorization, the last challenge its server
// made and the sign-in (tokens, and the client they were issued to).
//
//	<data-root>/_tauritavern/mcp/auth/<uuid>.json
//
// It holds credentials, so the directory is 0700 and the file 0600 (every
// file the store writes is 0600; this directory is also closed to others),
// and nothing of it ever leaves the backend. Reading is as strict as for
// the upstream kinds, and the file is bound to its registration's id and
// endpoint: a token is never sent to another URL. Registration files are
// not touched: they stay byte-compatible with TauriTavern.
const (
	authSchemaVersion = 1
	authKind          = "ttmcp.mcpServerAuth"
	// MaxAuthFileBytes bounds an auth file. Tokens are at most a few
	// kilobytes (JWTs included); the challenge's header values are capped
	// by the gateway.
	MaxAuthFileBytes = 256 << 10
)

type authFile struct {
	SchemaVersion  uint32         `json:"schemaVersion"`
	Kind           string         `json:"kind"`
	RegistrationID string         `json:"registrationId"`
	Endpoint       string         `json:"endpoint"`
	Challenge      *challengeFile `json:"challenge,omitzero"`
	Token          *tokenFile     `json:"token,omitzero"`
}

// authFileIn is how an auth file is read: the optional members are kept
// raw and decoded on their own, so that their members are required only
// when they are there.
type authFileIn struct {
	SchemaVersion  uint32         `json:"schemaVersion"`
	Kind           string         `json:"kind"`
	RegistrationID string         `json:"registrationId"`
	Endpoint       string         `json:"endpoint"`
	Challenge      jsontext.Value `json:"challenge"`
	Token          jsontext.Value `json:"token"`
}

type challengeFile struct {
	Status           int       `json:"status"`
	Error            string    `json:"error"`
	Description      string    `json:"description"`
	Scopes           []string  `json:"scopes"`
	ResourceMetadata string    `json:"resourceMetadata"`
	Header           []string  `json:"header"`
	At               time.Time `json:"at"`
}

type tokenFile struct {
	AccessToken   string     `json:"accessToken"`
	RefreshToken  string     `json:"refreshToken"`
	ExpiresAt     *time.Time `json:"expiresAt"`
	Scopes        []string   `json:"scopes"`
	TokenEndpoint string     `json:"tokenEndpoint"`
	Resource      string     `json:"resource"`
	Client        clientFile `json:"client"`
	SignedInAt    time.Time  `json:"signedInAt"`
	RefreshedAt   *time.Time `json:"refreshedAt"`
}

type clientFile struct {
	ClientID     string `json:"clientId"`
	ClientSecret string `json:"clientSecret"`
	AuthMethod   string `json:"authMethod"`
	Registration string `json:"registration"`
}

// The members without a default: of the file, of its challenge and of its
// token (each checked when present).
var (
	requiredAuthFields      = []string{"/schemaVersion", "/kind", "/registrationId", "/endpoint"}
	requiredChallengeFields = []string{"/status", "/error", "/description", "/scopes", "/resourceMetadata", "/header", "/at"}
	requiredTokenFields     = []string{"/accessToken", "/refreshToken", "/scopes", "/tokenEndpoint", "/resource",
		"/client", "/client/clientId", "/client/clientSecret", "/client/authMethod", "/client/registration", "/signedInAt"}
)

func (s *Store) authDir() string { return filepath.Join(s.root, "auth") }

// AuthPath returns the path of the auth file of id.
func (s *Store) AuthPath(id domain.RegistrationID) string {
	return filepath.Join(s.authDir(), string(id)+".json")
}

// LoadAuth reads auth/<id>.json; false when absent. A file bound to
// another endpoint is not this registration's: it reads as absent (the
// caller deletes it), so a token obtained for one URL is never sent to
// another, even after a crash between an endpoint change and the deletion.
// A file that exists but cannot be read is an error, never "absent".
func (s *Store) LoadAuth(id domain.RegistrationID, endpoint domain.Endpoint) (domain.Auth, bool, error) {
	if _, err := domain.ParseRegistrationID(string(id)); err != nil {
		return domain.Auth{}, false, err
	}
	path := s.AuthPath(id)
	data, found, err := s.data.readText(path, MaxAuthFileBytes, "auth")
	if !found || err != nil {
		return domain.Auth{}, false, err
	}
	a, err := decodeAuth(data, path, id)
	if err != nil {
		return domain.Auth{}, false, err
	}
	if a.Endpoint != endpoint {
		return domain.Auth{}, false, nil
	}
	return a, true, nil
}

// SaveAuth writes auth/<id>.json atomically with mode 0600, in a 0700
// directory. An Auth that holds nothing is deleted instead.
func (s *Store) SaveAuth(a domain.Auth) error {
	if _, err := domain.ParseRegistrationID(string(a.RegistrationID)); err != nil {
		return err
	}
	if a.IsZero() {
		return s.DeleteAuth(a.RegistrationID)
	}
	if a.Endpoint.IsZero() {
		return domain.Errorf(domain.KindInternal, "", "auth of registration `%s` has no endpoint", a.RegistrationID)
	}
	path := s.AuthPath(a.RegistrationID)
	data, err := marshalPretty(encodeAuth(a))
	if err != nil {
		return domain.Errorf(domain.KindBadRequest, "", "Failed to serialize JSON for %s: %v", path, err)
	}
	if len(data) > MaxAuthFileBytes {
		return domain.Errorf(domain.KindBadRequest, "", "the auth file would be %d bytes; auth files are limited to %d bytes", len(data), MaxAuthFileBytes)
	}
	if err := s.data.privateDir(s.authDir()); err != nil {
		return err
	}
	return s.data.writeFileAtomic(path, data)
}

// DeleteAuth removes the auth file of id; an absent file is not an error.
func (s *Store) DeleteAuth(id domain.RegistrationID) error {
	if _, err := domain.ParseRegistrationID(string(id)); err != nil {
		return err
	}
	return s.data.removeFile(s.AuthPath(id))
}

// privateDir creates dir with mode 0700 (its parents as writeFileAtomic
// does), or closes an existing one to group and others.
func (r dataRoot) privateDir(dir string) error {
	if err := r.mkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return ioError(err, "Failed to create %s: %v", filepath.Dir(dir), reason(err))
	}
	err := r.mkdir(dir, 0o700)
	if err == nil || !errors.Is(err, fs.ErrExist) {
		if err != nil {
			return ioError(err, "Failed to create %s: %v", dir, reason(err))
		}
		return nil
	}
	fi, err := r.stat(dir)
	if err != nil {
		return ioError(err, "Failed to read %s: %v", dir, reason(err))
	}
	if !fi.IsDir() {
		return domain.Errorf(domain.KindInternal, "", "Failed to create %s: it is %s", dir, describeMode(fi.Mode()))
	}
	if fi.Mode().Perm()&0o077 != 0 {
		if err := r.chmod(dir, fi.Mode().Perm()&0o700); err != nil {
			return ioError(err, "Failed to restrict %s: %v", dir, reason(err))
		}
	}
	return nil
}

func decodeAuth(data []byte, path string, id domain.RegistrationID) (domain.Auth, error) {
	var f authFileIn
	if err := unmarshalStrict(data, &f, requiredAuthFields); err != nil {
		return domain.Auth{}, domain.Errorf(domain.KindBadRequest, "", "Invalid JSON in %s: %v", path, err)
	}
	var c *challengeFile
	if f.Challenge != nil {
		c = new(challengeFile)
		if err := unmarshalStrict(f.Challenge, c, requiredChallengeFields); err != nil {
			return domain.Auth{}, domain.Errorf(domain.KindBadRequest, "", "Invalid JSON in %s: %v (in /challenge)", path, err)
		}
	}
	var t *tokenFile
	if f.Token != nil {
		t = new(tokenFile)
		if err := unmarshalStrict(f.Token, t, requiredTokenFields); err != nil {
			return domain.Auth{}, domain.Errorf(domain.KindBadRequest, "", "Invalid JSON in %s: %v (in /token)", path, err)
		}
	}
	if f.SchemaVersion != authSchemaVersion {
		return domain.Auth{}, domain.Errorf(domain.KindBadRequest, "mcp.auth_schema_unsupported", "schemaVersion %d in %s", f.SchemaVersion, path)
	}
	if f.Kind != authKind {
		return domain.Auth{}, domain.Errorf(domain.KindBadRequest, "mcp.auth_kind_invalid", "kind `%s` in %s", f.Kind, path)
	}
	if f.RegistrationID != string(id) {
		return domain.Auth{}, domain.Errorf(domain.KindBadRequest, "mcp.auth_registration_mismatch", "id `%s` does not match registration `%s` in %s", f.RegistrationID, id, path)
	}
	endpoint, err := domain.ParseEndpoint(f.Endpoint)
	if err != nil || endpoint.String() != f.Endpoint {
		return domain.Auth{}, domain.Errorf(domain.KindBadRequest, "mcp.auth_endpoint_invalid", "endpoint `%s` in %s is not a normalised endpoint", f.Endpoint, path)
	}
	a := domain.Auth{RegistrationID: id, Endpoint: endpoint}
	if c != nil {
		if c.Status != 401 && c.Status != 403 {
			return domain.Auth{}, domain.Errorf(domain.KindBadRequest, "mcp.auth_file_invalid", "challenge status %d in %s", c.Status, path)
		}
		a.Challenge = &domain.Challenge{Status: c.Status, Error: c.Error, Description: c.Description, Scopes: orNone(c.Scopes),
			ResourceMetadata: c.ResourceMetadata, Header: orNone(c.Header), At: c.At}
	}
	if t != nil {
		if t.AccessToken == "" && t.RefreshToken == "" {
			return domain.Auth{}, domain.Errorf(domain.KindBadRequest, "mcp.auth_file_invalid", "a token without an access or refresh token in %s", path)
		}
		if t.TokenEndpoint == "" || t.Client.ClientID == "" {
			return domain.Auth{}, domain.Errorf(domain.KindBadRequest, "mcp.auth_file_invalid", "a token without its token endpoint or client in %s", path)
		}
		switch t.Client.AuthMethod {
		case domain.AuthMethodNone, domain.AuthMethodPost, domain.AuthMethodBasic:
		default:
			return domain.Auth{}, domain.Errorf(domain.KindBadRequest, "mcp.auth_file_invalid", "client authMethod `%s` in %s", t.Client.AuthMethod, path)
		}
		switch t.Client.Registration {
		case domain.ClientDynamic, domain.ClientManual:
		default:
			return domain.Auth{}, domain.Errorf(domain.KindBadRequest, "mcp.auth_file_invalid", "client registration `%s` in %s", t.Client.Registration, path)
		}
		tok := &domain.Token{
			AccessToken: domain.Secret(t.AccessToken), RefreshToken: domain.Secret(t.RefreshToken),
			Scopes: orNone(t.Scopes), TokenEndpoint: t.TokenEndpoint, Resource: t.Resource,
			Client: domain.OAuthClient{ID: t.Client.ClientID, Secret: domain.Secret(t.Client.ClientSecret),
				AuthMethod: t.Client.AuthMethod, Registration: t.Client.Registration},
			SignedInAt: t.SignedInAt,
		}
		if t.ExpiresAt != nil {
			tok.ExpiresAt = *t.ExpiresAt
		}
		if t.RefreshedAt != nil {
			tok.RefreshedAt = *t.RefreshedAt
		}
		a.Token = tok
	}
	return a, nil
}

func orNone(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func encodeAuth(a domain.Auth) authFile {
	f := authFile{SchemaVersion: authSchemaVersion, Kind: authKind, RegistrationID: string(a.RegistrationID), Endpoint: a.Endpoint.String()}
	if c := a.Challenge; c != nil {
		f.Challenge = &challengeFile{Status: c.Status, Error: c.Error, Description: c.Description, Scopes: orNone(slices.Clone(c.Scopes)),
			ResourceMetadata: c.ResourceMetadata, Header: orNone(slices.Clone(c.Header)), At: c.At.UTC()}
	}
	if t := a.Token; t != nil {
		tf := &tokenFile{
			AccessToken: t.AccessToken.Reveal(), RefreshToken: t.RefreshToken.Reveal(),
			Scopes: orNone(slices.Clone(t.Scopes)), TokenEndpoint: t.TokenEndpoint, Resource: t.Resource,
			Client: clientFile{ClientID: t.Client.ID, ClientSecret: t.Client.Secret.Reveal(),
				AuthMethod: t.Client.AuthMethod, Registration: t.Client.Registration},
			SignedInAt: t.SignedInAt.UTC(),
		}
		if !t.ExpiresAt.IsZero() {
			e := t.ExpiresAt.UTC()
			tf.ExpiresAt = &e
		}
		if !t.RefreshedAt.IsZero() {
			r := t.RefreshedAt.UTC()
			tf.RefreshedAt = &r
		}
		f.Token = tf
	}
	return f
}
