// Package service holds the use cases of the MCP platform: it turns the
// page's DTOs into domain values, keeps the rules of reference §1.4, and
// drives the adapters it consumes through the small interfaces below.
//
// Every mutation is serialised: two concurrent updates of one registration
// cannot interleave their read-modify-write, and a list never sees a file
// half way through a change.
package service

import (
	"context"
	"log/slog"

	"github.com/ttmcp/ttmcp/backend/domain"
	"github.com/ttmcp/ttmcp/jsapi"
)

// Registrations is the registration storage the service needs.
type Registrations interface {
	// Scan loads every registration file; files that cannot be loaded are
	// reported as issues while the healthy ones still load.
	Scan() ([]domain.Registration, []jsapi.StorageIssue, error)
	// Load returns false when the registration does not exist.
	Load(id domain.RegistrationID) (domain.Registration, bool, error)
	// Save writes a registration atomically.
	Save(r domain.Registration) error
	// Delete removes a registration file; an absent file is not an error.
	Delete(id domain.RegistrationID) error
	// DeleteCatalog removes a registration's catalog snapshot; an absent
	// snapshot is not an error.
	DeleteCatalog(id domain.RegistrationID) error
}

// Service implements the registration commands.
type Service struct {
	regs Registrations
	log  *slog.Logger
	// mu serialises mutations. It is a channel so that a caller whose
	// context ends while waiting gives up instead of queueing forever.
	mu chan struct{}
}

// New returns a Service over regs. A nil logger discards.
func New(regs Registrations, log *slog.Logger) *Service {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Service{regs: regs, log: log, mu: make(chan struct{}, 1)}
}

// lock takes the mutation lock or fails when ctx ends first.
func (s *Service) lock(ctx context.Context) (unlock func(), err error) {
	select {
	case s.mu <- struct{}{}:
		return func() { <-s.mu }, nil
	case <-ctx.Done():
		return nil, domain.Errorf(domain.KindUnavailable, jsapi.CodeRequestCancelled, "the request was cancelled before it ran: %v", context.Cause(ctx))
	}
}
