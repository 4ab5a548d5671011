package server

import (
	"context"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ttmcp/ttmcp/jsapi"
)

// withArgs adapts a command whose args are its arguments themselves, as
// upstream's extension store commands take them ({namespace, key, ...}, not
// {dto: ...}). They are decoded as strictly as a dto.
func withArgs[A, R any](fn func(context.Context, A) (R, error)) handler {
	return func(ctx context.Context, args jsontext.Value) (any, error) {
		if len(args) == 0 || args.Kind() != '{' {
			return nil, errorf(jsapi.KindBadRequest, jsapi.CodeArgsInvalid, "args must be an object")
		}
		var a A
		if err := decodeArgs(args, &a, ""); err != nil {
			return nil, err
		}
		return fn(ctx, a)
	}
}

// done adapts a command whose result is nothing (null on the wire, as a
// Rust command returning () answers).
func done[A any](fn func(context.Context, A) error) func(context.Context, A) (any, error) {
	return func(ctx context.Context, a A) (any, error) {
		return nil, fn(ctx, a)
	}
}
