package domain

import (
	"errors"
	"fmt"
	"io/fs"
	"testing"
)

// TestKindString pins the names to jsapi.Kind* (the wire kinds); the
// domain package does not import the contract package.
func TestKindString(t *testing.T) {
	tests := []struct {
		k    Kind
		want string
	}{
		{KindBadRequest, "BadRequest"},
		{KindNotFound, "NotFound"},
		{KindConflict, "Conflict"},
		{KindUnavailable, "Unavailable"},
		{KindInternal, "Internal"},
		{Kind(42), "Kind(42)"},
		{Kind(-1), "Kind(-1)"},
	}
	for _, tt := range tests {
		if got := tt.k.String(); got != tt.want {
			t.Errorf("Kind(%d).String() = %q, want %q", int(tt.k), got, tt.want)
		}
	}
}

func TestError(t *testing.T) {
	err := Errorf(KindBadRequest, "mcp.endpoint_invalid", "%s", "relative URL without a base")
	if got := err.Error(); got != "mcp.endpoint_invalid: relative URL without a base" {
		t.Errorf("Error() = %q", got)
	}
	if got := Errorf(KindInternal, "", "Invalid JSON in %s: %s", "/x.json", "oops").Error(); got != "Invalid JSON in /x.json: oops" {
		t.Errorf("Error() without code = %q", got)
	}

	wrapped := fmt.Errorf("saving: %w", err)
	if KindOf(wrapped) != KindBadRequest || CodeOf(wrapped) != "mcp.endpoint_invalid" {
		t.Errorf("KindOf/CodeOf through a wrap = %v, %q", KindOf(wrapped), CodeOf(wrapped))
	}
	plain := errors.New("plain")
	if KindOf(plain) != KindInternal || CodeOf(plain) != "" {
		t.Errorf("KindOf/CodeOf of a plain error = %v, %q", KindOf(plain), CodeOf(plain))
	}
	if KindOf(nil) != KindInternal || CodeOf(nil) != "" {
		t.Error("KindOf/CodeOf of nil")
	}

	cause := &Error{Kind: KindInternal, Detail: "Failed to read x: permission denied", Err: fs.ErrPermission}
	if !errors.Is(cause, fs.ErrPermission) || cause.Error() != "Failed to read x: permission denied" {
		t.Errorf("cause not reachable or leaked into the message: %v", cause)
	}
}
