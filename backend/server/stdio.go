package server

import (
	"context"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/ttmcp/ttmcp/backend/domain"
)

// stdioMembers are the members by which a request could try to start a
// process: a command, its arguments, environment or working directory, or
// a transport. No command takes one (SPEC §10: a stdio server is
// configured only with `ttmcp stdio …` on the backend's machine).
var stdioMembers = []string{"command", "args", "env", "cwd", "transport", "stdio"}

// refuseStdioMembers answers a request whose args, or whose dto, has one
// of stdioMembers with a BadRequest that says where stdio servers are
// configured, instead of the generic "unknown member" the strict decoding
// would give; nothing else of the request is looked at or run.
func refuseStdioMembers(h handler) handler {
	return func(ctx context.Context, args jsontext.Value) (any, error) {
		var outer map[string]jsontext.Value
		if json.Unmarshal(args, &outer) == nil {
			found := memberIn(outer)
			if found == "" {
				var dto map[string]jsontext.Value
				if json.Unmarshal(outer["dto"], &dto) == nil {
					if m := memberIn(dto); m != "" {
						found = "dto." + m
					}
				}
			}
			if found != "" {
				return nil, domain.Errorf(domain.KindBadRequest, domain.CodeStdioConfigReadOnly,
					"no command takes `%s`: %s", found, domain.StdioConfigElsewhere)
			}
		}
		return h(ctx, args)
	}
}

// memberIn returns the first of stdioMembers that m has, or "".
func memberIn(m map[string]jsontext.Value) string {
	for _, name := range stdioMembers {
		if _, ok := m[name]; ok {
			return name
		}
	}
	return ""
}
