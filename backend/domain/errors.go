package domain

import (
	"errors"
	"fmt"
)

// Kind classifies an error by who can act on it. The names are the wire
// kinds of jsapi (KindBadRequest is "BadRequest", ...), so the presentation
// layer can pass Kind.String() through unchanged.
type Kind int

const (
	// KindInternal: the backend failed in a way that is not the caller's
	// fault. It is the zero value, so an error of unknown origin is never
	// mistaken for the caller's.
	KindInternal Kind = iota
	// KindBadRequest: the input is invalid; retrying it unchanged fails again.
	KindBadRequest
	// KindNotFound: the named registration, tool or call does not exist.
	KindNotFound
	// KindConflict: the request collides with the current state.
	KindConflict
	// KindUnavailable: a dependency (a server, the disk) cannot serve the
	// request now.
	KindUnavailable
)

var kindNames = [...]string{
	KindInternal:    "Internal",
	KindBadRequest:  "BadRequest",
	KindNotFound:    "NotFound",
	KindConflict:    "Conflict",
	KindUnavailable: "Unavailable",
}

// String returns the wire name of k.
func (k Kind) String() string {
	if k >= 0 && int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// Error is an error with a kind and a stable code. Its message starts with
// the code, as upstream's do ("mcp.endpoint_invalid: relative URL without a
// base"), so a caller that only reads the message still sees the code.
type Error struct {
	Kind Kind
	// Code is the upstream code ("mcp.endpoint_invalid"), or "" for errors
	// upstream reports without one (e.g. "Invalid JSON in <path>: ...").
	Code   string
	Detail string
	// Err is the underlying cause, if any, for errors.Is and errors.As. It
	// is not part of the message: Detail already says what went wrong.
	Err error
}

// Error returns "Code: Detail", or Detail alone when Code is empty.
func (e *Error) Error() string {
	if e.Code == "" {
		return e.Detail
	}
	return e.Code + ": " + e.Detail
}

// Unwrap returns the underlying cause.
func (e *Error) Unwrap() error { return e.Err }

// Errorf returns an Error whose Detail is formatted from format and args.
func Errorf(kind Kind, code, format string, args ...any) *Error {
	return &Error{Kind: kind, Code: code, Detail: fmt.Sprintf(format, args...)}
}

// KindOf returns the kind of the first *Error in err's chain, or
// KindInternal when there is none.
func KindOf(err error) Kind {
	if e, ok := errors.AsType[*Error](err); ok {
		return e.Kind
	}
	return KindInternal
}

// CodeOf returns the code of the first *Error in err's chain, or "".
func CodeOf(err error) string {
	if e, ok := errors.AsType[*Error](err); ok {
		return e.Code
	}
	return ""
}

// invalid returns a BadRequest error: every validation failure of this
// package is the caller's to fix.
func invalid(code, format string, args ...any) *Error {
	return Errorf(KindBadRequest, code, format, args...)
}
