//go:build unix

package gateway

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ttmcp/ttmcp/backend/domain"
	"github.com/ttmcp/ttmcp/backend/gateway/stdiotest"
)

// A stdio server's resources and prompts go over its one process: lists,
// a read, a get, a content over 8 MiB refused in place (the process
// stays), an answer over the read cap and a process that dies mid-read
// outcome_unknown with the stdio codes.
func TestStdioResources(t *testing.T) {
	dir := t.TempDir()
	g := stdioGateway(t, nil)
	r := stdioReg(t, "tools", dir)
	ctx := context.Background()

	res, err := g.ListResources(ctx, r)
	if err != nil || len(res.Items) != 2 || res.Items[0].URI != "test://crash" || res.Items[1].URI != "test://hello" {
		t.Fatalf("resources %+v %v", res, err)
	}
	tpl, err := g.ListResourceTemplates(ctx, r)
	if err != nil || len(tpl.Items) != 1 || !slices.Equal(tpl.Items[0].Variables, []string{"bytes"}) {
		t.Fatalf("templates %+v %v", tpl, err)
	}
	prompts, err := g.ListPrompts(ctx, r)
	if err != nil || len(prompts.Items) != 1 || !prompts.Items[0].Arguments[0].Required {
		t.Fatalf("prompts %+v %v", prompts, err)
	}
	pid := stdiotest.Pids(t, dir, "tools")[0]
	hello := g.ReadResource(ctx, r, "test://hello")
	if hello.Result == nil || *hello.Result.Contents[0].Text != "hello from "+strconv.Itoa(pid) {
		t.Fatalf("read %+v", hello)
	}
	got := g.GetPrompt(ctx, r, "greet", map[string]string{"name": "Ada"})
	if got.Result == nil || *got.Result.Messages[0].Content.Text != "Hello, Ada" {
		t.Fatalf("get %+v", got)
	}

	big := g.ReadResource(ctx, r, "test://text/"+strconv.Itoa(domain.MaxContentBytes+1))
	if big.Outcome != domain.OutcomeKnownResponse || big.Result.Contents[0].Text != nil || big.Result.Contents[0].Size != domain.MaxContentBytes+1 ||
		big.Result.Diagnostics[0].Code != domain.CodeResourceContentTooLarge {
		t.Fatalf("over 8 MiB: %s %s %s", big.Outcome, big.Code, big.Message)
	}
	if again := stdiotest.Pids(t, dir, "tools"); !slices.Equal(again, []int{pid}) {
		t.Fatalf("the process changed: %v", again)
	}

	huge := g.ReadResource(ctx, r, "test://text/"+strconv.Itoa(13<<20))
	if huge.Outcome != domain.OutcomeUnknown || huge.Code != CodeStdioLineTooLong {
		t.Fatalf("over the cap: %s %s %s", huge.Outcome, huge.Code, huge.Message)
	}
	stdiotest.WaitGone(t, pid)

	crash := g.ReadResource(ctx, r, "test://crash")
	if crash.Outcome != domain.OutcomeUnknown || crash.Code != CodeStdioProcessExited || !strings.Contains(crash.Message, "the read crashed") {
		t.Fatalf("crash: %s %s %s", crash.Outcome, crash.Code, crash.Message)
	}
	caps, ok := g.Advertised(r)
	if !ok || !caps.Tools || !caps.Resources || !caps.Prompts || caps.Completions {
		t.Fatalf("advertised %+v", caps)
	}
}
