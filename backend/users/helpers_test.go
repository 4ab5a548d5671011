package users

import (
	"context"
	"testing"

	"github.com/go-json-experiment/json"

	"github.com/ttmcp/ttmcp/backend/domain"
)

// stackOf returns the open stack of handle.
func (u *Users) stackOf(t *testing.T, handle string) *stack {
	t.Helper()
	if handle == DefaultUser {
		return u.def
	}
	u.mu.Lock()
	e := u.open[handle]
	u.mu.Unlock()
	if e == nil {
		t.Fatalf("%s has no open stack", handle)
	}
	<-e.ready
	return e.stack
}

// addStdio adds a stdio server to handle's root as `ttmcp stdio add`
// does, and returns its id.
func (u *Users) addStdio(t *testing.T, handle, name string, cfg domain.Stdio) domain.RegistrationID {
	t.Helper()
	srv, err := u.stackOf(t, handle).svc.AddStdio(context.Background(), name, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return srv.ID
}

func jsontextMarshal(v any) (string, error) {
	b, err := json.Marshal(v)
	return string(b), err
}
