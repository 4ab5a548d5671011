// Package storagetest writes data roots for tests and benchmarks: many
// active registrations with cached catalogs, as a user with many servers
// has after discovering them (the input of the model-tool benchmarks).
package storagetest

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/ttmcp/ttmcp/backend/domain"
	"github.com/ttmcp/ttmcp/backend/storage"
)

// Servers writes n active registrations ("Server 00", ...) whose catalogs
// hold tools tools each, every tool permitted (Allow), and returns their
// ids. Each tool has a title, a two-sentence description and an object
// schema of four described properties (≈0.9 KiB in the catalog file).
func Servers(store *storage.Store, n, tools int) ([]domain.RegistrationID, error) {
	var ids []domain.RegistrationID
	for i := range n {
		ep, err := domain.ParseEndpoint(fmt.Sprintf("http://127.0.0.1:9/mcp/%02d", i))
		if err != nil {
			return nil, err
		}
		r, err := domain.NewRegistration(fmt.Sprintf("Server %02d", i), ep, nil, domain.ProtocolAuto)
		if err != nil {
			return nil, err
		}
		r.State = domain.StateActive
		cat := domain.Catalog{ProtocolVersion: "2025-11-25"}
		for j := range tools {
			name := fmt.Sprintf("tool.%03d", j)
			title := fmt.Sprintf("Tool %d of server %d", j, i)
			desc := fmt.Sprintf("Looks up records of kind %d in the %s index and returns the matching ones. ", j, strings.Repeat("example ", 8)) +
				"Use it when the user asks about a record by name, date or tag; results are paginated."
			schema, _ := json.Marshal(map[string]any{
				"type": "object",
				"properties": map[string]any{
					"query": map[string]any{"type": "string", "description": "Words to look for, in any order."},
					"limit": map[string]any{"type": "integer", "minimum": 1, "maximum": 100, "description": "How many records at most."},
					"since": map[string]any{"type": "string", "format": "date", "description": "Only records after this date."},
					"tags":  map[string]any{"type": "array", "items": map[string]any{"type": "string"}, "description": "Tags every record must have."},
				},
				"required": []string{"query"},
			})
			cat.Tools = append(cat.Tools, domain.Tool{NativeName: name, Title: &title, Description: &desc,
				InputSchema: schema, Annotations: json.RawMessage(`{"readOnlyHint":true}`)})
			r.Permissions[name] = domain.PermissionAllow
		}
		if err := store.Save(r); err != nil {
			return nil, err
		}
		if err := store.SaveCatalog(r.ID, r.Endpoint, cat); err != nil {
			return nil, err
		}
		ids = append(ids, r.ID)
	}
	return ids, nil
}
