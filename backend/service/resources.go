package service

import (
	"context"

	"github.com/ttmcp/ttmcp/backend/domain"
	"github.com/ttmcp/ttmcp/jsapi"
)

// Resources and prompts (SPEC §10 "Resources and prompts"). The contract
// (commands, DTOs) landed first so the Manager can be built against it;
// the use cases land next. Until then every command answers
// mcp.resources_not_ready, so nothing pretends to work.

// CodeResourcesNotReady: the backend's resources and prompts are not
// built yet (interim, while the contract is in place).
const CodeResourcesNotReady = "mcp.resources_not_ready"

func notReady() error {
	return domain.Errorf(domain.KindUnavailable, CodeResourcesNotReady, "resources and prompts are not available in this backend yet")
}

// ListResources lists a server's resources (list_mcp_resources).
func (s *Service) ListResources(ctx context.Context, dto jsapi.McpListDto) (jsapi.McpResourceList, error) {
	return jsapi.McpResourceList{}, notReady()
}

// ListResourceTemplates lists a server's resource templates.
func (s *Service) ListResourceTemplates(ctx context.Context, dto jsapi.McpListDto) (jsapi.McpResourceTemplateList, error) {
	return jsapi.McpResourceTemplateList{}, notReady()
}

// ReadResource reads one resource.
func (s *Service) ReadResource(ctx context.Context, dto jsapi.ReadMcpResourceDto) (jsapi.McpCallOutcome, error) {
	return jsapi.McpCallOutcome{}, notReady()
}

// ListPrompts lists a server's prompts.
func (s *Service) ListPrompts(ctx context.Context, dto jsapi.McpListDto) (jsapi.McpPromptList, error) {
	return jsapi.McpPromptList{}, notReady()
}

// GetPrompt gets one prompt with its arguments.
func (s *Service) GetPrompt(ctx context.Context, dto jsapi.GetMcpPromptDto) (jsapi.McpCallOutcome, error) {
	return jsapi.McpCallOutcome{}, notReady()
}

// CompleteArgument asks a server for completions of one argument.
func (s *Service) CompleteArgument(ctx context.Context, dto jsapi.CompleteMcpArgumentDto) (jsapi.McpCompletion, error) {
	return jsapi.McpCompletion{}, notReady()
}

// ServerCapabilities returns what a server advertised and what the user
// allows.
func (s *Service) ServerCapabilities(ctx context.Context, dto jsapi.McpRegistrationIdDto) (jsapi.McpServerCapabilities, error) {
	return jsapi.McpServerCapabilities{}, notReady()
}

// SetServerCapabilities turns resources or prompts on or off.
func (s *Service) SetServerCapabilities(ctx context.Context, dto jsapi.SetMcpServerCapabilitiesDto) (jsapi.McpServer, error) {
	return jsapi.McpServer{}, notReady()
}
